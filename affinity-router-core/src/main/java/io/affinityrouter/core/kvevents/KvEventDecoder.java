package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.internal.Checks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessagePackException;
import org.msgpack.value.ValueType;

/**
 * Decodes one replica's KV-event payloads (vLLM's and SGLang's {@code EventBatch}, msgpack) and
 * applies them to a {@link PrefixCacheEvents} sink, without sockets: {@link KvEventSubscriber} runs
 * one per subscription, and a simulator or a test can feed it bytes directly.
 *
 * <p>Accepted: the batch as an array {@code [ts, events]} or {@code [ts, events, dp_rank]}, or as a
 * map {@code {ts, events, data_parallel_rank}}; each event either as a tagged array (vLLM before
 * 0.26: {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id,
 * medium, lora_name, extra_keys, group_idx, kv_cache_spec_kind, ...]},
 * {@code ["BlockRemoved", block_hashes, medium, group_idx]}, {@code ["AllBlocksCleared"]}) or as a
 * map with its tag under {@code "type"} (vLLM 0.26+, SGLang). Fields missing from the tail take
 * their defaults; unknown keys and extra trailing fields are ignored. Block hashes are unsigned
 * 64-bit integers (as Java {@code long} bits), signed integers, or bytes, of which the last 8 are
 * read big-endian (as vLLM's integer hashes are derived).
 *
 * <p>Only what routing can use is applied: {@code medium} GPU (or absent), KV-cache groups of full
 * attention ({@code kv_cache_spec_kind} {@code full_attention}, {@code mla_attention} or absent);
 * a {@code BlockRemoved} whose {@code group_idx} was seen storing other kinds (a hybrid model's
 * sliding-window group) leaves the full-attention copy of the block in place.
 * Blocks smaller than the router's block (SGLang pages) are chained into whole router blocks first.
 * A block's {@code lora_name}, when set, is its model (requests for a LoRA adapter name it as
 * their model); one known only by its {@code lora_id} is skipped ({@link KvEventSkip#UNNAMED_LORA}).
 * A cache salt puts the blocks in that tenant's chains (the tenant is the salt: a gateway passes
 * {@code RoutingRequest#tenant()} to the engine as {@code cache_salt}): SGLang's, in its metadata
 * map at array position 7 (where vLLM has {@code lora_name}) or its map events' {@code cache_salt};
 * vLLM's, as the one {@code extra_keys} string (besides the LoRA name) on a prompt's first block.
 * Any other extra key (multimodal identifiers) skips the block ({@link KvEventSkip#EXTRA_KEYS}), so
 * a text prompt never matches it. Everything skipped is counted by {@link KvEventSkip}; a payload
 * that cannot be decoded is counted as a decode error (the events before the damage stay applied)
 * and never throws.
 *
 * <p>Reuses its buffers between payloads; allocates only the arrays handed to the sink. Not
 * thread-safe: one decoder per stream, called from one thread at a time.
 */
public final class KvEventDecoder {
  private static final byte[] EVENTS = PayloadReader.ascii("events");
  private static final byte[] TYPE = PayloadReader.ascii("type");
  private static final byte[] BLOCK_STORED = PayloadReader.ascii("BlockStored");
  private static final byte[] BLOCK_REMOVED = PayloadReader.ascii("BlockRemoved");
  private static final byte[] ALL_CLEARED = PayloadReader.ascii("AllBlocksCleared");
  private static final byte[] BLOCK_HASHES = PayloadReader.ascii("block_hashes");
  private static final byte[] PARENT = PayloadReader.ascii("parent_block_hash");
  private static final byte[] TOKEN_IDS = PayloadReader.ascii("token_ids");
  private static final byte[] BLOCK_SIZE = PayloadReader.ascii("block_size");
  private static final byte[] MEDIUM = PayloadReader.ascii("medium");
  private static final byte[] LORA_NAME = PayloadReader.ascii("lora_name");
  private static final byte[] SPEC_KIND = PayloadReader.ascii("kv_cache_spec_kind");
  private static final byte[] EXTRA_KEYS = PayloadReader.ascii("extra_keys");
  private static final byte[] CACHE_SALT = PayloadReader.ascii("cache_salt");
  private static final byte[] METADATA = PayloadReader.ascii("metadata");
  private static final byte[] GROUP_IDX = PayloadReader.ascii("group_idx");
  private static final byte[] LORA_ID = PayloadReader.ascii("lora_id");
  private static final byte[] LOCALITY = PayloadReader.ascii("locality");
  private static final byte[] REMOTE = PayloadReader.ascii("remote");
  private static final byte[] GPU = PayloadReader.ascii("gpu");
  private static final byte[] FULL_ATTENTION = PayloadReader.ascii("full_attention");
  private static final byte[] MLA_ATTENTION = PayloadReader.ascii("mla_attention");

  private static final int STORED = 1;
  private static final int REMOVED = 2;
  private static final int CLEARED = 3;
  private static final int UNKNOWN = 4;

  private final @Nullable String model;
  private final KvEventCounters counters;
  private final BlockAssembler assembler;
  private final PayloadReader in = new PayloadReader();
  private byte[] loraName = new byte[64];
  private int loraLength;
  private @Nullable String lastLora;
  private byte[] lastLoraBytes = new byte[0];

  // the event being decoded
  private int kind;
  private long[] hashes = new long[64];
  private int hashCount;
  private boolean hasParent;
  private long parent;
  private int[] tokens = new int[1024];
  private int tokenCount;
  private boolean tokensUnusable;
  private int blockSize;
  private boolean gpu;
  private boolean fullAttention;
  private boolean malformed;
  private byte[] salt = new byte[64]; // the cache salt: SGLang's, or vLLM's first-block extra key
  private int saltLength; // -1: none
  private @Nullable String lastSalt;
  private byte[] lastSaltBytes = new byte[0];
  private boolean extraKeyed; // an extra key that is neither the LoRA name nor the salt
  private int group; // group_idx, -1 when absent
  private int loraId; // lora_id, -1 when absent
  private boolean vllmSalt; // the salt came from extra_keys (so only a prompt's first block has it)
  private long otherGroups; // bit g: group g stores blocks that are not full attention

  private KvEventDecoder(PrefixCacheEvents sink, String replicaId, @Nullable String model,
      int routerBlockSize, KvEventCounters counters) {
    this.model = model;
    this.counters = counters;
    this.assembler = new BlockAssembler(sink, replicaId, routerBlockSize, counters);
  }

  /**
   * Creates a decoder that applies one replica's events to {@code sink}, in blocks of the sink's
   * {@link PrefixCacheEvents#tokensPerBlock()}.
   *
   * @param sink where the events go, normally {@code router.cacheEvents()}
   * @param replicaId the replica the events come from
   * @param model the model its blocks are stored for (as requests name it), or null for none
   * @throws IllegalArgumentException if {@code replicaId} is empty or the sink's block size is not
   *     positive
   */
  public static KvEventDecoder create(PrefixCacheEvents sink, String replicaId,
      @Nullable String model) {
    return create(sink, replicaId, model, new KvEventCounters());
  }

  static KvEventDecoder create(PrefixCacheEvents sink, String replicaId, @Nullable String model,
      KvEventCounters counters) {
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(replicaId, "replicaId");
    if (replicaId.isEmpty()) {
      throw new IllegalArgumentException("replicaId: \"\" (expected: not empty)");
    }
    int routerBlockSize = Checks.positive(sink.tokensPerBlock(), "tokensPerBlock");
    return new KvEventDecoder(sink, replicaId, model, routerBlockSize, counters);
  }

  /** As {@link #decode(byte[], int, int)} over the whole array. */
  public boolean decode(byte[] batch) {
    return decode(batch, 0, batch.length);
  }

  /**
   * Decodes one {@code EventBatch} payload and applies its events in order.
   *
   * @return true if the payload decoded; false if it was damaged (counted in
   *     {@link KvEventStats#decodeErrors()}; events before the damage were applied)
   * @throws IndexOutOfBoundsException if the range is outside {@code batch}
   */
  public boolean decode(byte[] batch, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, batch.length);
    try {
      in.reset(batch, offset, length);
      batch();
      counters.batches.increment();
      return true;
    } catch (IOException | MessagePackException | IndexOutOfBoundsException e) {
      counters.decodeErrors.increment();
      return false;
    }
  }

  /**
   * Drops the replica's exact index ({@link PrefixCacheEvents#allBlocksCleared}) and any pages
   * waiting for the rest of their router block: for a stretch of the stream that was lost.
   */
  public void clear() {
    assembler.cleared();
  }

  /** This decoder's counters (the transport's counters are zero). Thread-safe. */
  public KvEventStats stats() {
    return counters.snapshot();
  }

  private void batch() throws IOException {
    ValueType type = in.nextType();
    switch (type) {
      case ARRAY -> {
        int n = in.arrayHeader();
        if (n < 2) {
          throw new IOException("batch of " + n + " fields");
        }
        in.skip(); // ts
        events();
        in.skip(n - 2);
      }
      case MAP -> {
        int n = in.mapHeader();
        boolean sawEvents = false;
        for (int i = 0; i < n; i++) {
          in.readText();
          if (in.textIs(EVENTS)) {
            events();
            sawEvents = true;
          } else {
            in.skip(); // ts, data_parallel_rank, or a key this decoder does not know
          }
        }
        if (!sawEvents) {
          throw new IOException("batch without events");
        }
      }
      default -> throw new IOException("batch is " + type);
    }
  }

  private void events() throws IOException {
    int n = in.arrayHeader();
    for (int i = 0; i < n; i++) {
      event();
    }
  }

  private void event() throws IOException {
    reset();
    ValueType type = in.nextType();
    switch (type) {
      case ARRAY -> arrayEvent(in.arrayHeader());
      case MAP -> mapEvent(in.mapHeader());
      default -> {
        in.skip();
        malformed = true;
      }
    }
    counters.events.increment();
    apply();
  }

  private void arrayEvent(int fields) throws IOException {
    if (fields == 0) {
      malformed = true;
      return;
    }
    kind = tag();
    for (int position = 1; position < fields; position++) {
      if (kind == STORED) {
        storedField(position);
      } else if (kind == REMOVED) {
        switch (position) {
          case 1 -> hashes();
          case 2 -> medium();
          case 3 -> group = groupField();
          default -> in.skip();
        }
      } else {
        in.skip();
      }
    }
    if (kind == STORED && fields < 5 || kind == REMOVED && fields < 2) {
      malformed = true;
    }
  }

  private void storedField(int position) throws IOException {
    switch (position) {
      case 1 -> hashes();
      case 2 -> parent();
      case 3 -> tokens();
      case 4 -> blockSize = blockSizeField();
      case 6 -> medium();
      case 7 -> loraNameOrMetadata();
      case 5 -> loraId = groupField();
      case 8 -> extraKeys();
      case 9 -> group = groupField();
      case 10 -> specKind();
      default -> in.skip(); // sliding window, newer
    }
  }

  private void mapEvent(int entries) throws IOException {
    boolean sawHashes = false;
    boolean sawTokens = false;
    for (int i = 0; i < entries; i++) {
      in.readText();
      if (in.textIs(TYPE)) {
        kind = tag();
      } else if (in.textIs(BLOCK_HASHES)) {
        hashes();
        sawHashes = true;
      } else if (in.textIs(PARENT)) {
        parent();
      } else if (in.textIs(TOKEN_IDS)) {
        tokens();
        sawTokens = true;
      } else if (in.textIs(BLOCK_SIZE)) {
        blockSize = blockSizeField();
      } else if (in.textIs(MEDIUM)) {
        medium();
      } else if (in.textIs(LORA_NAME)) {
        loraName();
      } else if (in.textIs(EXTRA_KEYS)) {
        extraKeys();
      } else if (in.textIs(GROUP_IDX)) {
        group = groupField();
      } else if (in.textIs(LORA_ID)) {
        loraId = groupField();
      } else if (in.textIs(LOCALITY)) {
        locality();
      } else if (in.textIs(CACHE_SALT)) {
        salt();
      } else if (in.textIs(METADATA)) {
        metadata();
      } else if (in.textIs(SPEC_KIND)) {
        specKind();
      } else {
        in.skip();
      }
    }
    if (kind == 0 || (kind == STORED || kind == REMOVED) && !sawHashes) {
      malformed = true;
    }
    if (kind == STORED && !sawTokens) {
      tokensUnusable = true;
    }
  }

  private void apply() {
    if (malformed) {
      counters.skip(KvEventSkip.MALFORMED_EVENT);
      return;
    }
    switch (kind) {
      case STORED -> {
        if (group >= 0 && group < Long.SIZE) { // learn which groups are not full attention
          otherGroups = fullAttention ? otherGroups & ~(1L << group) : otherGroups | 1L << group;
        }
        if (!gpu) {
          counters.skip(KvEventSkip.NOT_GPU);
        } else if (!fullAttention) {
          counters.skip(KvEventSkip.NOT_FULL_ATTENTION);
        } else if (loraId >= 0 && loraLength < 0) {
          counters.skip(KvEventSkip.UNNAMED_LORA);
        } else if (extraKeyed || vllmSalt && hasParent) {
          // a first-block key past the prompt's first block is not a salt: multimodal
          counters.skip(KvEventSkip.EXTRA_KEYS);
        } else if (tokensUnusable || tokenCount == 0) {
          counters.skip(KvEventSkip.NO_TOKENS);
        } else {
          assembler.stored(loraLength >= 0 ? lora() : model, saltLength >= 0 ? saltText() : null,
              hasParent, parent, hashes, hashCount, tokens, tokenCount, blockSize);
        }
      }
      case REMOVED -> {
        if (!gpu) {
          counters.skip(KvEventSkip.NOT_GPU);
        } else if (group >= 0 && group < Long.SIZE && (otherGroups & 1L << group) != 0) {
          // a sliding-window or Mamba group dropping its copy: full attention still holds it
          counters.skip(KvEventSkip.NOT_FULL_ATTENTION);
        } else if (hashCount > 0) {
          assembler.removed(hashes, hashCount);
        }
      }
      case CLEARED -> assembler.cleared();
      default -> counters.skip(KvEventSkip.UNKNOWN_EVENT);
    }
  }

  private void reset() {
    kind = 0;
    hashCount = 0;
    hasParent = false;
    tokenCount = 0;
    tokensUnusable = false;
    blockSize = -1;
    gpu = true;
    fullAttention = true;
    malformed = false;
    loraLength = -1;
    saltLength = -1;
    vllmSalt = false;
    extraKeyed = false;
    group = -1;
    loraId = -1;
  }

  private int tag() throws IOException {
    if (in.nextType() != ValueType.STRING) {
      in.skip();
      malformed = true;
      return UNKNOWN;
    }
    in.readText();
    if (in.textIs(BLOCK_STORED)) {
      return STORED;
    } else if (in.textIs(BLOCK_REMOVED)) {
      return REMOVED;
    } else if (in.textIs(ALL_CLEARED)) {
      return CLEARED;
    }
    return UNKNOWN;
  }

  private void hashes() throws IOException {
    if (in.tryNil()) {
      return;
    }
    int n = in.arrayHeader();
    if (hashes.length < n) {
      hashes = new long[Math.max(n, hashes.length * 2)];
    }
    hashCount = 0;
    for (int i = 0; i < n; i++) {
      if (in.readHash()) {
        hashes[hashCount++] = in.hash();
      } else {
        malformed = true;
      }
    }
  }

  private int groupField() throws IOException {
    int g = in.intField();
    return g == PayloadReader.NOT_AN_INTEGER ? -1 : g;
  }

  private int blockSizeField() throws IOException {
    int size = in.intField();
    if (size == PayloadReader.NOT_AN_INTEGER) {
      malformed = true;
    }
    return size;
  }

  private void parent() throws IOException {
    if (in.tryNil()) {
      hasParent = false;
    } else if (in.readHash()) {
      hasParent = true;
      parent = in.hash();
    } else {
      malformed = true;
    }
  }

  private void tokens() throws IOException {
    if (in.tryNil()) {
      tokensUnusable = true;
      return;
    }
    int n = in.arrayHeader();
    if (tokens.length < n) {
      tokens = new int[Math.max(n, tokens.length * 2)];
    }
    tokenCount = 0;
    for (int i = 0; i < n; i++) {
      if (!tokensUnusable && in.nextType() == ValueType.INTEGER) {
        tokens[tokenCount++] = in.readInt();
      } else {
        in.skip(); // EAGLE bigram pairs [a, b], or not a token at all
        tokensUnusable = true;
      }
    }
  }

  private void medium() throws IOException {
    if (!in.tryNil()) {
      in.readText();
      gpu = in.textIgnoringCaseIs(GPU);
    }
  }

  /** vLLM 0.26+'s {@code locality} of a storage tier: a REMOTE store is not this replica's. */
  private void locality() throws IOException {
    if (!in.tryNil()) {
      in.readText();
      gpu &= !in.textIgnoringCaseIs(REMOTE);
    }
  }

  private void specKind() throws IOException {
    if (!in.tryNil()) {
      in.readText();
      fullAttention = in.textIs(FULL_ATTENTION) || in.textIs(MLA_ATTENTION);
    }
  }

  /** Position 7 of an array event: vLLM's {@code lora_name}, or SGLang's metadata map. */
  private void loraNameOrMetadata() throws IOException {
    if (in.nextType() == ValueType.MAP) {
      metadata();
    } else {
      loraName();
    }
  }

  /** SGLang's {@code BlockStoredMetadata}: {@code cache_salt}, {@code session_id}, newer keys. */
  private void metadata() throws IOException {
    if (in.tryNil()) {
      return;
    }
    if (in.nextType() != ValueType.MAP) {
      in.skip();
      malformed = true;
      return;
    }
    int n = in.mapHeader();
    for (int i = 0; i < n; i++) {
      if (in.nextType() != ValueType.STRING) {
        in.skip();
        in.skip();
        continue;
      }
      in.readText();
      if (in.textIs(CACHE_SALT)) {
        salt();
      } else {
        in.skip();
      }
    }
  }

  private void salt() throws IOException {
    if (in.tryNil()) {
      return;
    }
    if (in.nextType() != ValueType.STRING) {
      in.skip();
      malformed = true;
      return;
    }
    in.readText();
    if (in.textLength() > 0) {
      keepSalt();
    }
  }

  private void keepSalt() {
    int n = in.textLength();
    if (salt.length < n) {
      salt = new byte[n * 2];
    }
    System.arraycopy(in.text(), 0, salt, 0, n);
    saltLength = n;
  }

  /** The current event's salt, as a string reused while it does not change. */
  private String saltText() {
    if (lastSalt == null
        || !Arrays.equals(lastSaltBytes, 0, lastSaltBytes.length, salt, 0, saltLength)) {
      lastSaltBytes = Arrays.copyOf(salt, saltLength);
      lastSalt = new String(lastSaltBytes, StandardCharsets.UTF_8);
    }
    return lastSalt;
  }

  /**
   * vLLM's {@code extra_keys}: per block nil or a tuple of what else went into its hash (multimodal
   * identifiers, the LoRA name, the cache salt on the prompt's first block). The LoRA name leaves a
   * block matchable by that model's prompts; one string on the event's first block alone is taken
   * as the salt (its tenant's chain); anything else marks the event.
   */
  private void extraKeys() throws IOException {
    if (in.tryNil()) {
      return;
    }
    if (in.nextType() != ValueType.ARRAY) {
      in.skip();
      malformed = true;
      return;
    }
    int blocks = in.arrayHeader();
    for (int b = 0; b < blocks; b++) {
      if (in.tryNil()) {
        continue;
      }
      if (in.nextType() != ValueType.ARRAY) {
        in.skip();
        extraKeyed = true;
        continue;
      }
      int keys = in.arrayHeader();
      for (int k = 0; k < keys; k++) {
        if (in.nextType() != ValueType.STRING) {
          in.skip();
          extraKeyed = true;
          continue;
        }
        in.readText();
        if (loraLength >= 0 && Arrays.equals(in.text(), 0, in.textLength(), loraName, 0,
            loraLength)) {
          continue;
        }
        if (b == 0 && saltLength < 0) {
          keepSalt();
          vllmSalt = true;
        } else {
          extraKeyed = true;
        }
      }
    }
  }

  private void loraName() throws IOException {
    if (in.tryNil()) {
      return;
    }
    in.readText();
    int n = in.textLength();
    if (loraName.length < n) {
      loraName = new byte[n * 2];
    }
    System.arraycopy(in.text(), 0, loraName, 0, n);
    loraLength = n;
  }

  /** The current event's LoRA name, as a string reused while it does not change. */
  private String lora() {
    if (lastLora == null
        || !Arrays.equals(lastLoraBytes, 0, lastLoraBytes.length, loraName, 0, loraLength)) {
      lastLoraBytes = Arrays.copyOf(loraName, loraLength);
      lastLora = new String(lastLoraBytes, StandardCharsets.UTF_8);
    }
    return lastLora;
  }

}
