/** Service instances as the replicas of the core's fleet view, which scrapes their metrics. */
@NullMarked
package io.affinityrouter.examples.gateway.replica;

import org.jspecify.annotations.NullMarked;
