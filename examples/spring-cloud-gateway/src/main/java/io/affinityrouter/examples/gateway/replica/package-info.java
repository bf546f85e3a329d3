/** Service instances as router replicas, kept fresh by scraping their metrics. */
@NullMarked
package io.affinityrouter.examples.gateway.replica;

import org.jspecify.annotations.NullMarked;
