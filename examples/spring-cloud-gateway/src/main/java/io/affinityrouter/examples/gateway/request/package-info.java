/** The gateway filter: reads requests into routing requests, answers not-routed ones, releases leases. */
@NullMarked
package io.affinityrouter.examples.gateway.request;

import org.jspecify.annotations.NullMarked;
