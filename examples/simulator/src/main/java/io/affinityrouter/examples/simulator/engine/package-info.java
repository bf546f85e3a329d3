/** The discrete-event run: gateways, scrapes, fleet events, the load calibration, and each run's result. */
@NullMarked
package io.affinityrouter.examples.simulator.engine;

import org.jspecify.annotations.NullMarked;
