package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.spi.Checks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;
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
 * attention ({@code kv_cache_spec_kind} {@code full_attention}, {@code mla_attention} or absent).
 * Blocks smaller than the router's block (SGLang pages) are chained into whole router blocks first.
 * A block's {@code lora_name}, when set, is its model (requests for a LoRA adapter name it as
 * their model). Everything skipped is counted by {@link KvEventSkip}; a payload that cannot be
 * decoded is counted as a decode error (the events before the damage stay applied) and never
 * throws.
 *
 * <p>Reuses its buffers between payloads; allocates only the arrays handed to the sink. Not
 * thread-safe: one decoder per stream, called from one thread at a time.
 */
public final class KvEventDecoder {
  private static final byte[] TS = ascii("ts");
  private static final byte[] EVENTS = ascii("events");
  private static final byte[] TYPE = ascii("type");
  private static final byte[] BLOCK_STORED = ascii("BlockStored");
  private static final byte[] BLOCK_REMOVED = ascii("BlockRemoved");
  private static final byte[] ALL_CLEARED = ascii("AllBlocksCleared");
  private static final byte[] BLOCK_HASHES = ascii("block_hashes");
  private static final byte[] PARENT = ascii("parent_block_hash");
  private static final byte[] TOKEN_IDS = ascii("token_ids");
  private static final byte[] BLOCK_SIZE = ascii("block_size");
  private static final byte[] MEDIUM = ascii("medium");
  private static final byte[] LORA_NAME = ascii("lora_name");
  private static final byte[] SPEC_KIND = ascii("kv_cache_spec_kind");
  private static final byte[] GPU = ascii("gpu");
  private static final byte[] FULL_ATTENTION = ascii("full_attention");
  private static final byte[] MLA_ATTENTION = ascii("mla_attention");

  private static final int STORED = 1;
  private static final int REMOVED = 2;
  private static final int CLEARED = 3;
  private static final int UNKNOWN = 4;

  private final @Nullable String model;
  private final KvEventCounters counters;
  private final BlockAssembler assembler;
  private final ArrayBufferInput input = new ArrayBufferInput(new byte[0]);
  private final MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(input);

  private byte[] payload = new byte[0];
  private int payloadOffset;
  private int payloadEnd;
  private byte[] text = new byte[64];
  private int textLength;
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

  private KvEventDecoder(PrefixCacheEvents sink, String replicaId, @Nullable String model,
      int routerBlockSize, KvEventCounters counters) {
    this.model = model;
    this.counters = counters;
    this.assembler = new BlockAssembler(sink, replicaId, routerBlockSize, counters);
  }

  /**
   * Creates a decoder that applies one replica's events to {@code sink}.
   *
   * @param sink where the events go, normally {@code router.cacheEvents()}
   * @param replicaId the replica the events come from
   * @param model the model its blocks are stored for (as requests name it), or null for none
   * @param routerBlockSize the router's tokens per block ({@code AffinityRouter.Builder
   *     #tokenBlockSize}, default 16)
   * @throws IllegalArgumentException if {@code routerBlockSize} is not positive or
   *     {@code replicaId} is empty
   */
  public static KvEventDecoder create(PrefixCacheEvents sink, String replicaId,
      @Nullable String model, int routerBlockSize) {
    return create(sink, replicaId, model, routerBlockSize, new KvEventCounters());
  }

  static KvEventDecoder create(PrefixCacheEvents sink, String replicaId, @Nullable String model,
      int routerBlockSize, KvEventCounters counters) {
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(replicaId, "replicaId");
    if (replicaId.isEmpty()) {
      throw new IllegalArgumentException("replicaId: \"\" (expected: not empty)");
    }
    Checks.positive(routerBlockSize, "routerBlockSize");
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
    payload = batch;
    payloadOffset = offset;
    payloadEnd = offset + length;
    input.reset(batch, offset, length);
    try {
      unpacker.reset(input);
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
    MessageFormat format = unpacker.getNextFormat();
    switch (format.getValueType()) {
      case ARRAY -> {
        int n = unpacker.unpackArrayHeader();
        if (n < 2) {
          throw new IOException("batch of " + n + " fields");
        }
        unpacker.skipValue(); // ts
        events();
        unpacker.skipValue(n - 2);
      }
      case MAP -> {
        int n = unpacker.unpackMapHeader();
        boolean sawEvents = false;
        for (int i = 0; i < n; i++) {
          readText();
          if (textIs(EVENTS)) {
            events();
            sawEvents = true;
          } else {
            unpacker.skipValue(); // ts, data_parallel_rank, or a key this decoder does not know
          }
        }
        if (!sawEvents) {
          throw new IOException("batch without events");
        }
      }
      default -> throw new IOException("batch is " + format);
    }
  }

  private void events() throws IOException {
    int n = arrayHeader();
    for (int i = 0; i < n; i++) {
      event();
    }
  }

  private void event() throws IOException {
    reset();
    MessageFormat format = unpacker.getNextFormat();
    switch (format.getValueType()) {
      case ARRAY -> arrayEvent(unpacker.unpackArrayHeader());
      case MAP -> mapEvent(unpacker.unpackMapHeader());
      default -> {
        unpacker.skipValue();
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
          default -> unpacker.skipValue();
        }
      } else {
        unpacker.skipValue();
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
      case 4 -> blockSize = intField();
      case 6 -> medium();
      case 7 -> loraName();
      case 10 -> specKind();
      default -> unpacker.skipValue(); // lora_id, extra_keys, group_idx, sliding window, newer
    }
  }

  private void mapEvent(int entries) throws IOException {
    boolean sawHashes = false;
    boolean sawTokens = false;
    for (int i = 0; i < entries; i++) {
      readText();
      if (textIs(TYPE)) {
        kind = tag();
      } else if (textIs(BLOCK_HASHES)) {
        hashes();
        sawHashes = true;
      } else if (textIs(PARENT)) {
        parent();
      } else if (textIs(TOKEN_IDS)) {
        tokens();
        sawTokens = true;
      } else if (textIs(BLOCK_SIZE)) {
        blockSize = intField();
      } else if (textIs(MEDIUM)) {
        medium();
      } else if (textIs(LORA_NAME)) {
        loraName();
      } else if (textIs(SPEC_KIND)) {
        specKind();
      } else {
        unpacker.skipValue();
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
        if (!gpu) {
          counters.skip(KvEventSkip.NOT_GPU);
        } else if (!fullAttention) {
          counters.skip(KvEventSkip.NOT_FULL_ATTENTION);
        } else if (tokensUnusable || tokenCount == 0) {
          counters.skip(KvEventSkip.NO_TOKENS);
        } else {
          assembler.stored(loraLength >= 0 ? lora() : model, hasParent, parent, hashes, hashCount,
              tokens, tokenCount, blockSize);
        }
      }
      case REMOVED -> {
        if (!gpu) {
          counters.skip(KvEventSkip.NOT_GPU);
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
  }

  private int tag() throws IOException {
    if (unpacker.getNextFormat().getValueType() != ValueType.STRING) {
      unpacker.skipValue();
      malformed = true;
      return UNKNOWN;
    }
    readText();
    if (textIs(BLOCK_STORED)) {
      return STORED;
    } else if (textIs(BLOCK_REMOVED)) {
      return REMOVED;
    } else if (textIs(ALL_CLEARED)) {
      return CLEARED;
    }
    return UNKNOWN;
  }

  private void hashes() throws IOException {
    if (unpacker.tryUnpackNil()) {
      return;
    }
    int n = arrayHeader();
    if (hashes.length < n) {
      hashes = new long[Math.max(n, hashes.length * 2)];
    }
    hashCount = 0;
    for (int i = 0; i < n; i++) {
      if (hash()) {
        hashes[hashCount++] = scratchHash;
      } else {
        malformed = true;
      }
    }
  }

  private long scratchHash;

  /** Reads one block hash into {@link #scratchHash}; false (value skipped) if it is no hash. */
  private boolean hash() throws IOException {
    MessageFormat format = unpacker.getNextFormat();
    switch (format.getValueType()) {
      case INTEGER -> {
        if (format == MessageFormat.UINT64) {
          // unpackLong refuses values above 2^63 - 1; read the eight bytes after the marker
          int at = payloadOffset + (int) unpacker.getTotalReadBytes() + 1;
          scratchHash = bigEndian(payload, at, 8);
          unpacker.skipValue();
        } else {
          scratchHash = unpacker.unpackLong();
        }
        return true;
      }
      case BINARY -> {
        int n = unpacker.unpackBinaryHeader();
        readPayload(n);
        int take = Math.min(n, 8);
        scratchHash = bigEndian(text, n - take, take);
        return true;
      }
      default -> {
        unpacker.skipValue();
        return false;
      }
    }
  }

  /** An array header whose length the rest of the payload can hold (at least a byte each). */
  private int arrayHeader() throws IOException {
    int n = unpacker.unpackArrayHeader();
    checkRemaining(n);
    return n;
  }

  private void checkRemaining(int n) throws IOException {
    long remaining = payloadEnd - payloadOffset - unpacker.getTotalReadBytes();
    if (n < 0 || n > remaining) {
      throw new IOException("length " + n + " past the end of the payload");
    }
  }

  private int intField() throws IOException {
    if (unpacker.tryUnpackNil()) {
      return -1;
    }
    if (unpacker.getNextFormat().getValueType() != ValueType.INTEGER) {
      unpacker.skipValue();
      malformed = true;
      return -1;
    }
    return unpacker.unpackInt();
  }

  private void parent() throws IOException {
    if (unpacker.tryUnpackNil()) {
      hasParent = false;
    } else if (hash()) {
      hasParent = true;
      parent = scratchHash;
    } else {
      malformed = true;
    }
  }

  private void tokens() throws IOException {
    if (unpacker.tryUnpackNil()) {
      tokensUnusable = true;
      return;
    }
    int n = arrayHeader();
    if (tokens.length < n) {
      tokens = new int[Math.max(n, tokens.length * 2)];
    }
    tokenCount = 0;
    for (int i = 0; i < n; i++) {
      MessageFormat format = unpacker.getNextFormat();
      if (format.getValueType() == ValueType.INTEGER && !tokensUnusable) {
        tokens[tokenCount++] = unpacker.unpackInt();
      } else {
        unpacker.skipValue(); // EAGLE bigram pairs [a, b], or not a token at all
        tokensUnusable = true;
      }
    }
  }

  private void medium() throws IOException {
    if (!unpacker.tryUnpackNil()) {
      readText();
      gpu = textIgnoringCaseIs(GPU);
    }
  }

  private void specKind() throws IOException {
    if (!unpacker.tryUnpackNil()) {
      readText();
      fullAttention = textIs(FULL_ATTENTION) || textIs(MLA_ATTENTION);
    }
  }

  private void loraName() throws IOException {
    if (unpacker.tryUnpackNil()) {
      return;
    }
    readText();
    if (loraName.length < textLength) {
      loraName = new byte[textLength * 2];
    }
    System.arraycopy(text, 0, loraName, 0, textLength);
    loraLength = textLength;
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

  private void readText() throws IOException {
    readPayload(unpacker.unpackRawStringHeader());
  }

  private void readPayload(int n) throws IOException {
    checkRemaining(n);
    if (text.length < n) {
      text = new byte[Math.max(n, text.length * 2)];
    }
    unpacker.readPayload(text, 0, n);
    textLength = n;
  }

  private boolean textIs(byte[] expected) {
    return Arrays.equals(text, 0, textLength, expected, 0, expected.length);
  }

  private boolean textIgnoringCaseIs(byte[] lowerCase) {
    if (textLength != lowerCase.length) {
      return false;
    }
    for (int i = 0; i < textLength; i++) {
      int c = text[i];
      if (c >= 'A' && c <= 'Z') {
        c += 'a' - 'A';
      }
      if (c != lowerCase[i]) {
        return false;
      }
    }
    return true;
  }

  private static long bigEndian(byte[] bytes, int from, int length) {
    if (from < 0 || from + length > bytes.length) {
      throw new ArrayIndexOutOfBoundsException("hash bytes");
    }
    long v = 0;
    for (int i = 0; i < length; i++) {
      v = (v << 8) | (bytes[from + i] & 0xFF);
    }
    return v;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
