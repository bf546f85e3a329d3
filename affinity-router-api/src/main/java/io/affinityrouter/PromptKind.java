package io.affinityrouter;

/** How a {@link RoutingRequest} carries its prompt. */
public enum PromptKind {
  /** Token ids, as the engine's tokenizer produced them: the most precise prefix matching. */
  TOKENS,
  /** Text, for gateways that do not tokenize; hashed in blocks of characters. */
  TEXT,
  /** Block hashes already computed by {@link Router#prehash(RoutingRequest)}; no prompt content. */
  BLOCK_HASHES
}
