package io.affinityrouter.examples.simulator.strategy;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Encodes the simulated engines' KV events as vLLM puts them on the wire: an {@code EventBatch}
 * {@code [ts, [event], 0]} with the event as a tagged array (msgspec {@code array_like=True,
 * tag=True}: {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size,
 * lora_id, medium, lora_name, extra_keys, group_idx, kv_cache_spec_kind,
 * kv_cache_spec_sliding_window]}), hashes as msgpack uint64. Not thread-safe; the returned array
 * is a fresh copy.
 */
final class KvEventBytes {
  private final MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();
  private final byte[] uint64 = new byte[9];
  private double ts;

  byte[] stored(@Nullable Long parent, long[] hashes, int[] tokens, int from, int to,
      int blockSize) {
    try {
      begin();
      packer.packArrayHeader(12).packString("BlockStored");
      hashes(hashes, from / blockSize, to / blockSize);
      hash(parent);
      packer.packArrayHeader(to - from);
      for (int t = from; t < to; t++) {
        packer.packInt(tokens[t]);
      }
      packer.packInt(blockSize).packNil().packString("GPU").packNil().packNil().packInt(0)
          .packString("full_attention").packNil();
      return end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  byte[] removed(long[] hashes) {
    try {
      begin();
      packer.packArrayHeader(4).packString("BlockRemoved");
      hashes(hashes, 0, hashes.length);
      packer.packString("GPU").packInt(0);
      return end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  byte[] cleared() {
    try {
      begin();
      packer.packArrayHeader(1).packString("AllBlocksCleared");
      return end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void begin() throws IOException {
    packer.clear();
    ts += 0.001; // the events' order, in seconds as vLLM stamps them
    packer.packArrayHeader(3).packDouble(ts).packArrayHeader(1);
  }

  private byte[] end() throws IOException {
    packer.packInt(0); // data_parallel_rank
    return packer.toByteArray();
  }

  private void hashes(long[] hashes, int from, int to) throws IOException {
    packer.packArrayHeader(to - from);
    for (int i = from; i < to; i++) {
      hash(hashes[i]);
    }
  }

  /** A hash as vLLM sends its integer hashes: unsigned 64-bit (uint64 above 2^63). */
  private void hash(@Nullable Long h) throws IOException {
    if (h == null) {
      packer.packNil();
    } else if (h >= 0) {
      packer.packLong(h);
    } else {
      uint64[0] = (byte) 0xCF;
      long v = h;
      for (int i = 8; i >= 1; i--) {
        uint64[i] = (byte) v;
        v >>>= 8;
      }
      packer.writePayload(uint64);
    }
  }
}
