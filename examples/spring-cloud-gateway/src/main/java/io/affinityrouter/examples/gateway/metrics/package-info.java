/** Micrometer meters of the router's decisions. */
@NullMarked
package io.affinityrouter.examples.gateway.metrics;

import org.jspecify.annotations.NullMarked;
