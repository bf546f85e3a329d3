/** The simulated replicas: vLLM-like engine steps, continuous batching with chunked prefill, the KV cache with prefix reuse, and the step-time model. */
@NullMarked
package io.affinityrouter.examples.simulator.fleet;

import org.jspecify.annotations.NullMarked;
