/**
 * The gateway filters: read requests into routing requests, answer not-routed ones, end leases.
 */
@NullMarked
package io.affinityrouter.examples.gateway.request;

import org.jspecify.annotations.NullMarked;
