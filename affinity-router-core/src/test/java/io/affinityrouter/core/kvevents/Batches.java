package io.affinityrouter.core.kvevents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Builds KV-event payloads with msgpack-java's packer, in vLLM's two encodings: events as tagged
 * arrays (msgspec {@code array_like=True, tag=True}) or as maps with a {@code "type"} key.
 */
final class Batches {
  private final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
  private final boolean maps;
  private int events;
  private final MessageBufferPacker body = MessagePack.newDefaultBufferPacker();

  private static final java.util.concurrent.atomic.AtomicLong CLOCK =
      new java.util.concurrent.atomic.AtomicLong();

  /** An empty batch, each with its own timestamp (as vLLM's are): nothing for the sink. */
  static byte[] empty() {
    return arrays().build();
  }

  private Batches(boolean maps) {
    this.maps = maps;
  }

  /** Events as tagged arrays (vLLM before 0.26). */
  static Batches arrays() {
    return new Batches(false);
  }

  /** Events as maps (vLLM 0.26+, SGLang). */
  static Batches maps() {
    return new Batches(true);
  }

  /** A BlockStored with the common fields (GPU, full attention). */
  Batches stored(long[] hashes, Long parent, int[] tokens, int blockSize) {
    return stored(hashes, parent, tokens, blockSize, "GPU", "full_attention");
  }

  Batches stored(long[] hashes, Long parent, int[] tokens, int blockSize, String medium,
      String kind) {
    try {
      events++;
      if (maps) {
        body.packMapHeader(kind == null ? 8 : 9);
        key("type").packString("BlockStored");
        key("block_hashes");
        hashes(hashes);
        key("parent_block_hash");
        hash(parent);
        key("token_ids");
        tokens(tokens);
        key("block_size").packInt(blockSize);
        key("lora_id").packNil();
        key("medium");
        string(medium);
        key("lora_name").packNil();
        if (kind != null) {
          key("kv_cache_spec_kind").packString(kind);
        }
      } else {
        body.packArrayHeader(kind == null ? 8 : 11);
        body.packString("BlockStored");
        hashes(hashes);
        hash(parent);
        tokens(tokens);
        body.packInt(blockSize).packNil();
        string(medium);
        body.packNil();
        if (kind != null) {
          body.packNil().packInt(0).packString(kind);
        }
      }
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Batches removed(long... hashes) {
    try {
      events++;
      if (maps) {
        body.packMapHeader(4);
        key("type").packString("BlockRemoved");
        key("block_hashes");
        hashes(hashes);
        key("medium").packString("GPU");
        key("group_idx").packInt(0);
      } else {
        body.packArrayHeader(4).packString("BlockRemoved");
        hashes(hashes);
        body.packString("GPU").packInt(0);
      }
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Batches cleared() {
    try {
      events++;
      if (maps) {
        body.packMapHeader(1);
        key("type").packString("AllBlocksCleared");
      } else {
        body.packArrayHeader(1).packString("AllBlocksCleared");
      }
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Adds an already packed event (for odd shapes a test builds itself). */
  Batches raw(byte[] event) {
    try {
      events++;
      body.writePayload(event);
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The batch as vLLM sends it: {@code [ts, events, dp_rank]}. */
  byte[] build() {
    return build(false);
  }

  /** The batch as an array, or as a map {@code {ts, events, data_parallel_rank}}. */
  byte[] build(boolean mapBatch) {
    try {
      if (mapBatch) {
        p.packMapHeader(3).packString("ts").packDouble(1789095808.5 + CLOCK.incrementAndGet() * 1e-3);
        p.packString("events").packArrayHeader(events);
        p.writePayload(body.toByteArray());
        p.packString("data_parallel_rank").packInt(0);
      } else {
        p.packArrayHeader(3).packDouble(1789095808.5 + CLOCK.incrementAndGet() * 1e-3).packArrayHeader(events);
        p.writePayload(body.toByteArray());
        p.packInt(0);
      }
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private MessageBufferPacker key(String k) throws IOException {
    return (MessageBufferPacker) body.packString(k);
  }

  private void string(String s) throws IOException {
    if (s == null) {
      body.packNil();
    } else {
      body.packString(s);
    }
  }

  private void hashes(long[] hashes) throws IOException {
    body.packArrayHeader(hashes.length);
    for (long h : hashes) {
      hash(h);
    }
  }

  /** Packs as msgspec does: non-negative values as unsigned, so values above 2^63 are uint64. */
  private void hash(Long h) throws IOException {
    if (h == null) {
      body.packNil();
    } else if (h < 0) {
      body.packBigInteger(new BigInteger(Long.toUnsignedString(h)));
    } else {
      body.packLong(h);
    }
  }

  private void tokens(int[] tokens) throws IOException {
    body.packArrayHeader(tokens.length);
    for (int t : tokens) {
      body.packInt(t);
    }
  }
}
