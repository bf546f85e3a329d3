package io.affinityrouter.core.kvevents;

/**
 * Why a decoded KV event was not applied to the sink. Each skip is counted in
 * {@link KvEventStats#skipped(KvEventSkip)}; none of them stops the subscriber.
 */
public enum KvEventSkip {
  /**
   * A {@code BlockStored} or {@code BlockRemoved} for a tier other than GPU memory ({@code medium}),
   * or for storage that is not the replica's own ({@code locality} {@code REMOTE}).
   */
  NOT_GPU,
  /**
   * A {@code BlockStored} of a KV-cache group that is not full attention ({@code kv_cache_spec_kind}
   * other than {@code full_attention} or {@code mla_attention}, e.g. sliding window or Mamba): its
   * blocks do not make a prefix hit on their own; or a {@code BlockRemoved} of such a group (its
   * {@code group_idx} seen storing them), which leaves the full-attention copy in place.
   */
  NOT_FULL_ATTENTION,
  /** A {@code BlockStored} without token ids, or with token ids that are not plain integers. */
  NO_TOKENS,
  /**
   * A page shorter than the engine's pages seen before (SGLang's last, partial page of a radix node),
   * or pages that do not add up to whole router blocks.
   */
  PARTIAL_PAGE,
  /** An engine block size that is neither a multiple nor a divisor of the router's block size. */
  UNALIGNED_BLOCK_SIZE,
  /**
   * A {@code BlockStored} whose {@code extra_keys} hold more than its LoRA name and, on a prompt's
   * first block, one salt (multimodal identifiers): its blocks never match a text-only prompt.
   */
  EXTRA_KEYS,
  /**
   * A {@code BlockStored} for a LoRA adapter known only by its {@code lora_id} (no
   * {@code lora_name}): requests name adapters, so its blocks cannot be told from the base model's.
   */
  UNNAMED_LORA,
  /** An event whose fields have the wrong types or disagree (token count ≠ blocks × block size). */
  MALFORMED_EVENT,
  /** An event whose tag is none of {@code BlockStored}, {@code BlockRemoved}, {@code AllBlocksCleared}. */
  UNKNOWN_EVENT,
  /** The sink threw for the event. */
  SINK_REJECTED
}
