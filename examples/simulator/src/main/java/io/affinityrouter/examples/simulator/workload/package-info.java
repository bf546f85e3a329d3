/** Workloads: readers of the real traces (Mooncake, RAGPulse), the agent-session generator, and the prompt representation (chained segment keys, synthetic tokens). */
@NullMarked
package io.affinityrouter.examples.simulator.workload;

import org.jspecify.annotations.NullMarked;
