/**
 * A fake vLLM replica for end-to-end tests and demos of the router: OpenAI-compatible completions,
 * a simulated prefix cache and latency, vLLM's {@code /metrics}, sleep and wake. Entry point:
 * {@link io.affinityrouter.examples.fakevllm.FakeVllmServer}.
 */
package io.affinityrouter.examples.fakevllm;
