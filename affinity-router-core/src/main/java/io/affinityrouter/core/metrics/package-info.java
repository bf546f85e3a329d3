/**
 * Metrics-text parsers: read an inference engine's {@code /metrics} exposition (Prometheus text or
 * OpenMetrics) into the router's {@link io.affinityrouter.ReplicaLoad} and model states.
 *
 * <ul>
 *   <li>{@link io.affinityrouter.core.metrics.EngineMetrics}: vLLM (V0 and V1 names) and SGLang
 *       ({@code sglang:} and {@code sglang_} prefixes) families mapped to one
 *       {@link io.affinityrouter.core.metrics.ModelMetrics} per {@code model_name}: load gauges,
 *       KV capacity and usage (SGLang's slot counts and full-attention usage when present), the
 *       KV written (vLLM's prompt tokens by source, else its prefix-cache counters), waiting
 *       reasons, preemptions, token counters, sleep state, LoRA adapters; SGLang's per-rank
 *       series counted once per data-parallel rank (the table is in {@code EngineMetrics});
 *   <li>{@link io.affinityrouter.core.metrics.ThroughputTracker}: output tokens per second from
 *       successive scrapes of the generation-token counter.
 * </ul>
 *
 * <p>A gateway scrapes each replica every 50–100 ms, then:
 *
 * <pre>{@code
 * EngineMetrics m = tracker.update(EngineMetrics.parse(body), ticker.read());
 * Replica r = replica.toBuilder().models(m.modelStates()).load(m.replicaLoad()).build();
 * }</pre>
 *
 * <p>Null-marked: no parameter accepts {@code null} and no method returns it.
 *
 * <p>{@link io.affinityrouter.Unstable}: this package may still change incompatibly in a minor
 * release.
 */
@NullMarked
@Unstable
package io.affinityrouter.core.metrics;

import io.affinityrouter.Unstable;
import org.jspecify.annotations.NullMarked;
