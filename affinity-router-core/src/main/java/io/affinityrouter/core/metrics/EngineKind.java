package io.affinityrouter.core.metrics;

/** The inference engine a {@code /metrics} exposition came from, told by its metric names. */
public enum EngineKind {
  /** vLLM: {@code vllm:} names (V0 and V1 engines). */
  VLLM,
  /** SGLang: {@code sglang:} names, or {@code sglang_} as some releases write them. */
  SGLANG,
  /** No known engine family in the text, or both engines' families. */
  UNKNOWN
}
