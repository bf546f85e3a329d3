/** The fleet simulator's command line, its options and the workloads it builds. */
@NullMarked
package io.affinityrouter.examples.simulator;

import org.jspecify.annotations.NullMarked;
