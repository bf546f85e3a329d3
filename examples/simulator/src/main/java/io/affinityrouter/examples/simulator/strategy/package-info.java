/** Routing strategies behind one interface and a registry of names: the real router and emulations of the peers' algorithms. */
@NullMarked
package io.affinityrouter.examples.simulator.strategy;

import org.jspecify.annotations.NullMarked;
