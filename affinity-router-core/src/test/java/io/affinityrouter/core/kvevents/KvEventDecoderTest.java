package io.affinityrouter.core.kvevents;

import static io.affinityrouter.core.kvevents.RecordingSink.cleared;
import static io.affinityrouter.core.kvevents.RecordingSink.removed;
import static io.affinityrouter.core.kvevents.RecordingSink.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.Prompts;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** The payload decoder on bytes built with msgpack-java's packer, in both of vLLM's encodings. */
class KvEventDecoderTest {
  private static final long BIG = Long.parseUnsignedLong("15760518052499183552"); // > 2^63

  private final RecordingSink sink = new RecordingSink();
  private final KvEventDecoder decoder = KvEventDecoder.create(sink, "r1", "m");

  private static Batches encoding(boolean maps) {
    return maps ? Batches.maps() : Batches.arrays();
  }

  private static int[] range(int from, int to) {
    return IntStream.range(from, to).toArray();
  }

  @ParameterizedTest(name = "map events: {0}")
  @ValueSource(booleans = {false, true})
  void storedRemovedAndClearedReachTheSinkInOrder(boolean maps) {
    byte[] batch = encoding(maps)
        .stored(new long[] {100, BIG}, null, range(0, 32), 16)
        .stored(new long[] {102}, BIG, range(32, 48), 16)
        .removed(102, BIG)
        .cleared()
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {100, BIG}, range(0, 32), 16),
        stored("r1", "m", BIG, new long[] {102}, range(32, 48), 16),
        removed("r1", 102, BIG),
        cleared("r1"));
    KvEventStats stats = decoder.stats();
    assertThat(stats.batches()).isEqualTo(1);
    assertThat(stats.events()).isEqualTo(4);
    assertThat(stats.skippedTotal()).isZero();
    assertThat(stats.decodeErrors()).isZero();
  }

  @ParameterizedTest(name = "map events: {0}")
  @ValueSource(booleans = {false, true})
  void aMapBatchDecodesAsAnArrayBatchDoes(boolean maps) {
    assertThat(decoder.decode(encoding(maps).stored(new long[] {7}, null, range(0, 16), 16)
        .build(true))).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {7}, range(0, 16), 16));
  }

  @Test
  void unsigned64BitHashesKeepTheirBits() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    // [ts, [["BlockRemoved", [2^64 - 1, 2^63, BIG], nil]]] with the hashes as msgpack uint64
    p.packArrayHeader(2).packDouble(1.0).packArrayHeader(1).packArrayHeader(3)
        .packString("BlockRemoved").packArrayHeader(3)
        .packBigInteger(new java.math.BigInteger("18446744073709551615"))
        .packBigInteger(java.math.BigInteger.ONE.shiftLeft(63))
        .packBigInteger(new java.math.BigInteger(Long.toUnsignedString(BIG))).packNil();
    assertThat(decoder.decode(p.toByteArray())).isTrue();
    assertThat(sink.calls()).containsExactly(removed("r1", -1L, Long.MIN_VALUE, BIG));
  }

  @Test
  void byteHashesAreTheirLastEightBytesBigEndian() throws IOException {
    byte[] digest = new byte[32];
    for (int i = 0; i < 32; i++) {
      digest[i] = (byte) (0xA0 + i);
    }
    long last8 = 0xB8B9BABBBCBDBEBFL;
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packArrayHeader(3).packDouble(1.0).packArrayHeader(1).packArrayHeader(7)
        .packString("BlockStored").packArrayHeader(1).packBinaryHeader(32).writePayload(digest);
    p.packBinaryHeader(3).writePayload(new byte[] {1, 2, 3}); // a short parent: its value
    p.packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packInt(16).packNil().packString("GPU").packNil();
    assertThat(decoder.decode(p.toByteArray())).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", 0x010203L, new long[] {last8}, range(0, 16), 16));
  }

  @Test
  void unknownKeysTrailingFieldsAndTheOldestFormAreAccepted() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(4).packString("ts").packDouble(2.0).packString("future").packArrayHeader(2)
        .packInt(1).packString("x").packString("events").packArrayHeader(3);
    // map event with keys this decoder does not know, "type" last
    p.packMapHeader(8).packString("block_hashes").packArrayHeader(1).packInt(5)
        .packString("session_id").packString("s").packString("parent_block_hash").packNil()
        .packString("token_ids").packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packString("block_size").packInt(16).packString("metadata").packMapHeader(1)
        .packString("k").packInt(1).packString("medium").packString("GPU")
        .packString("type").packString("BlockStored");
    // array event with fields past kv_cache_spec_sliding_window
    p.packArrayHeader(6).packString("BlockRemoved").packArrayHeader(1).packInt(5)
        .packString("GPU").packInt(0).packString("later").packArrayHeader(0);
    // vLLM 0.9's six fields
    p.packArrayHeader(6).packString("BlockStored").packArrayHeader(1).packInt(6).packInt(5)
        .packArrayHeader(16);
    for (int t = 16; t < 32; t++) {
      p.packInt(t);
    }
    p.packInt(16).packNil();
    p.packString("data_parallel_rank").packInt(3);
    assertThat(decoder.decode(p.toByteArray())).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {5}, range(0, 16), 16),
        removed("r1", 5),
        stored("r1", "m", 5L, new long[] {6}, range(16, 32), 16));
  }

  @ParameterizedTest(name = "map events: {0}")
  @ValueSource(booleans = {false, true})
  void everyTruncationIsCountedAndNothingThrows(boolean maps) {
    byte[] batch = encoding(maps).stored(new long[] {BIG}, 9L, range(0, 16), 16)
        .removed(BIG).build();
    for (int n = 0; n < batch.length; n++) {
      assertThat(decoder.decode(batch, 0, n)).as("first %d bytes", n).isFalse();
    }
    assertThat(decoder.stats().decodeErrors()).isEqualTo(batch.length);
    assertThat(decoder.decode(batch)).isTrue();
  }

  @Test
  void garbageNeverThrows() {
    Random random = new Random(42);
    for (int i = 0; i < 20_000; i++) {
      byte[] junk = new byte[random.nextInt(64)];
      random.nextBytes(junk);
      decoder.decode(junk);
    }
    KvEventStats stats = decoder.stats();
    assertThat(stats.decodeErrors() + stats.batches()).isEqualTo(20_000);
    assertThat(stats.decodeErrors()).isGreaterThan(19_000);
  }

  @Test
  void aHugeLengthHeaderIsAnErrorNotAnAllocation() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packArrayHeader(2).packDouble(1.0).packArrayHeader(Integer.MAX_VALUE);
    assertThat(decoder.decode(p.toByteArray())).isFalse();
  }

  @ParameterizedTest(name = "map events: {0}")
  @ValueSource(booleans = {false, true})
  void otherTiersAndGroupsThatAreNotFullAttentionAreSkipped(boolean maps) {
    byte[] batch = encoding(maps)
        .stored(new long[] {1}, null, range(0, 16), 16, "CPU", "full_attention")
        .stored(new long[] {2}, null, range(0, 16), 16, "GPU", "sliding_window")
        .stored(new long[] {3}, null, range(0, 16), 16, "GPU", "mamba")
        .stored(new long[] {4}, null, range(0, 16), 16, null, null)
        .stored(new long[] {5}, null, range(0, 16), 16, "gpu", "mla_attention")
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {4}, range(0, 16), 16),
        stored("r1", "m", null, new long[] {5}, range(0, 16), 16));
    assertThat(decoder.stats().skipped(KvEventSkip.NOT_GPU)).isEqualTo(1);
    assertThat(decoder.stats().skipped(KvEventSkip.NOT_FULL_ATTENTION)).isEqualTo(2);
  }

  @ParameterizedTest(name = "map events: {0}")
  @ValueSource(booleans = {false, true})
  void sglangPagesOfOneTokenAccumulateIntoRouterBlocks(boolean maps) {
    // One BlockStored per page of one token, each chained to the page before (SGLang page_size 1).
    Batches b = encoding(maps);
    long[] page = new long[40];
    for (int i = 0; i < 40; i++) {
      page[i] = -1000L - i; // SGLang's hashes are signed 64-bit
      b.stored(new long[] {page[i]}, i == 0 ? null : page[i - 1], new int[] {500 + i}, 1);
    }
    // a second prompt diverging after 8 tokens: branches off page 7
    long[] other = new long[8];
    for (int i = 0; i < 8; i++) {
      other[i] = 9000 + i;
      b.stored(new long[] {other[i]}, i == 0 ? page[7] : other[i - 1], new int[] {700 + i}, 1);
    }
    assertThat(decoder.decode(b.build())).isTrue();
    int[] branch = new int[16];
    System.arraycopy(range(500, 508), 0, branch, 0, 8);
    System.arraycopy(range(700, 708), 0, branch, 8, 8);
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {page[15]}, range(500, 516), 16),
        stored("r1", "m", page[15], new long[] {page[31]}, range(516, 532), 16),
        stored("r1", "m", null, new long[] {other[7]}, branch, 16));
    assertThat(decoder.stats().skippedTotal()).isZero();
  }

  @Test
  void pagesOfFourTokensAndLargerEngineBlocks() {
    RecordingSink sink = new RecordingSink(8);
    KvEventDecoder d8 = KvEventDecoder.create(sink, "r1", null);
    byte[] batch = Batches.maps()
        .stored(new long[] {1, 2}, null, range(0, 8), 4) // two pages in one event
        .stored(new long[] {3}, 2L, range(8, 12), 4)
        .stored(new long[] {4}, 3L, range(12, 16), 4)
        .build();
    assertThat(d8.decode(batch)).isTrue();
    assertThat(d8.decode(Batches.arrays().stored(new long[] {5}, 4L, range(16, 32), 16).build()))
        .isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", null, null, new long[] {2}, range(0, 8), 8),
        stored("r1", null, 2L, new long[] {4}, range(8, 16), 8),
        stored("r1", null, 4L, new long[] {5}, range(16, 32), 16));
  }

  @Test
  void partialPagesUnalignedBlocksAndEventsWithoutTokensAreSkipped() throws IOException {
    MessageBufferPacker bigram = MessagePack.newDefaultBufferPacker();
    bigram.packMapHeader(5).packString("type").packString("BlockStored")
        .packString("block_hashes").packArrayHeader(1).packInt(30)
        .packString("parent_block_hash").packNil()
        .packString("token_ids").packArrayHeader(1).packArrayHeader(2).packInt(1).packInt(2)
        .packString("block_size").packInt(1);
    MessageBufferPacker unknown = MessagePack.newDefaultBufferPacker();
    unknown.packArrayHeader(2).packString("BlockMoved").packInt(1);
    byte[] batch = Batches.maps()
        .stored(new long[] {10}, null, range(0, 16), 16)
        .stored(new long[] {11}, 10L, range(16, 20), 4) // the node's last, partial page
        .stored(new long[] {12}, null, range(0, 24), 24) // neither multiple nor divisor of 16
        .stored(new long[] {13}, null, new int[0], 16)
        .raw(bigram.toByteArray())
        .stored(new long[] {14, 15}, null, range(0, 16), 16) // 2 blocks, 16 tokens
        .raw(unknown.toByteArray())
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {10}, range(0, 16), 16));
    KvEventStats stats = decoder.stats();
    assertThat(stats.skipped(KvEventSkip.PARTIAL_PAGE)).isEqualTo(1);
    assertThat(stats.skipped(KvEventSkip.UNALIGNED_BLOCK_SIZE)).isEqualTo(1);
    assertThat(stats.skipped(KvEventSkip.NO_TOKENS)).isEqualTo(2);
    assertThat(stats.skipped(KvEventSkip.MALFORMED_EVENT)).isEqualTo(1);
    assertThat(stats.skipped(KvEventSkip.UNKNOWN_EVENT)).isEqualTo(1);
    assertThat(stats.events()).isEqualTo(7);
  }

  @Test
  void aSinkThatThrowsIsCountedAndTheRestOfTheBatchStillApplies() {
    PrefixCacheEvents failing = new PrefixCacheEvents() {
      @Override
      public void blocksStored(String replicaId, String model, String tenant, Long parent,
          long[] hashes, int[] tokens, int blockSize) {
        throw new IllegalArgumentException("engineBlockSize");
      }

      @Override
      public void blocksRemoved(String replicaId, long[] hashes) {
        sink.blocksRemoved(replicaId, hashes);
      }

      @Override
      public void allBlocksCleared(String replicaId) {}

      @Override
      public int tokensPerBlock() {
        return 16;
      }
    };
    KvEventDecoder d = KvEventDecoder.create(failing, "r1", null);
    assertThat(d.decode(Batches.arrays().stored(new long[] {1}, null, range(0, 16), 16)
        .removed(1).build())).isTrue();
    assertThat(d.stats().skipped(KvEventSkip.SINK_REJECTED)).isEqualTo(1);
    assertThat(sink.calls()).containsExactly(removed("r1", 1));
  }

  @Test
  void aLoraAdaptersBlocksAreStoredForTheAdapter() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packArrayHeader(2).packDouble(1.0).packArrayHeader(2);
    for (int i = 0; i < 2; i++) {
      p.packArrayHeader(8).packString("BlockStored").packArrayHeader(1).packInt(40 + i).packNil()
          .packArrayHeader(16);
      for (int t = 0; t < 16; t++) {
        p.packInt(t);
      }
      p.packInt(16).packInt(1).packString("GPU").packString("sql-adapter");
    }
    assertThat(decoder.decode(p.toByteArray())).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "sql-adapter", null, new long[] {40}, range(0, 16), 16),
        stored("r1", "sql-adapter", null, new long[] {41}, range(0, 16), 16));
  }

  @Test
  void aRouterWithItsOwnBlockSizeIsFedInItsBlocks() {
    Router router = AffinityRouter.builder().tokenBlockSize(32).build();
    assertThat(router.cacheEvents().tokensPerBlock()).isEqualTo(32);
    List<Replica> fleet = Prompts.replicas(4);
    int[] prompt = Prompts.tokens(5, 512);
    KvEventDecoder d = KvEventDecoder.create(router.cacheEvents(), "r3", null);
    long[] engine = java.util.stream.LongStream.rangeClosed(1, 32).toArray(); // 16-token blocks
    assertThat(d.decode(Batches.arrays().stored(engine, null, prompt, 16).build())).isTrue();
    RoutingDecision decision =
        router.select(RoutingRequest.builder().promptTokens(prompt).build(), fleet);
    decision.lease().close();
    assertThat(decision.replica().id()).isEqualTo("r3");
    assertThat(decision.matchedBlocks()).isEqualTo(16); // 512 tokens in blocks of 32
    assertThat(d.stats().skippedTotal()).isZero();
  }

  @Test
  void aSaltedEventMatchesItsTenantOnlyInARealRouter() throws IOException {
    Router router = AffinityRouter.builder().build();
    List<Replica> fleet = Prompts.replicas(4);
    int[] prompt = Prompts.tokens(9, 256);
    KvEventDecoder d = KvEventDecoder.create(router.cacheEvents(), "r1", null);
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    // SGLang's array form with the metadata map: the whole prompt, salted with tenant "acme"
    p.packArrayHeader(8).packString("BlockStored").packArrayHeader(16);
    for (int b = 0; b < 16; b++) {
      p.packLong(b + 1);
    }
    p.packNil().packArrayHeader(256);
    for (int t : prompt) {
      p.packInt(t);
    }
    p.packInt(16).packNil().packString("GPU").packMapHeader(1).packString("cache_salt")
        .packString("acme");
    assertThat(d.decode(Batches.arrays().raw(p.toByteArray()).build())).isTrue();
    RoutingDecision tenant = router.select(
        RoutingRequest.builder().tenant("acme").promptTokens(prompt).build(), fleet);
    tenant.lease().close();
    RoutingDecision other = router.select(RoutingRequest.builder().promptTokens(prompt).build(),
        fleet);
    other.lease().close();
    assertThat(tenant.replica().id()).isEqualTo("r1");
    assertThat(tenant.matchedBlocks()).isEqualTo(16);
    assertThat(other.matchedBlocks()).as("an unsalted prompt never meets salted blocks").isZero();
  }

  @Test
  void sglangPagesSteerARealRouter() {
    Router router = AffinityRouter.builder().build();
    List<Replica> fleet = Prompts.replicas(4);
    int[] prompt = Prompts.tokens(3, 1024);
    KvEventDecoder d = KvEventDecoder.create(router.cacheEvents(), "r2", null);
    Batches b = Batches.maps();
    for (int i = 0; i < 1024; i++) {
      b.stored(new long[] {i + 1}, i == 0 ? null : (long) i, new int[] {prompt[i]}, 1);
    }
    assertThat(d.decode(b.build())).isTrue();
    // SGLang evicts the leaf's pages: the last router block's pages, 1009..1024
    long[] leaf = java.util.stream.LongStream.rangeClosed(1009, 1024).toArray();
    assertThat(d.decode(Batches.maps().removed(leaf).build())).isTrue();
    RoutingDecision decision =
        router.select(RoutingRequest.builder().promptTokens(prompt).build(), fleet);
    decision.lease().close();
    assertThat(decision.replica().id()).isEqualTo("r2");
    assertThat(decision.matchedBlocks()).isEqualTo(63);
    assertThat(d.stats().skippedTotal()).isZero();
  }

  @Test
  void settingsAreCheckedAtTheBoundary() {
    assertThatThrownBy(() -> KvEventDecoder.create(sink, "", null))
        .hasMessage("replicaId: \"\" (expected: not empty)");
    assertThatThrownBy(() -> KvEventDecoder.create(new RecordingSink(0), "r1", null))
        .hasMessage("tokensPerBlock: 0 (expected: > 0)");
  }

  /** SGLang's array {@code BlockStored}: the seven base fields, then its metadata map, if any. */
  private static byte[] sglangStored(long hash, int from, String salt, String sessionId)
      throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    boolean metadata = salt != null || sessionId != null;
    p.packArrayHeader(metadata ? 8 : 7).packString("BlockStored").packArrayHeader(1).packLong(hash)
        .packNil().packArrayHeader(16);
    for (int t = from; t < from + 16; t++) {
      p.packInt(t);
    }
    p.packInt(16).packNil().packString("GPU");
    if (metadata) {
      p.packMapHeader((salt != null ? 1 : 0) + (sessionId != null ? 1 : 0));
      if (salt != null) {
        p.packString("cache_salt").packString(salt);
      }
      if (sessionId != null) {
        p.packString("session_id").packString(sessionId);
      }
    }
    return p.toByteArray();
  }

  /** SGLang's map form: {@code cache_salt} beside the event's fields. */
  private static byte[] saltedMapEvent() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(5).packString("type").packString("BlockStored").packString("block_hashes")
        .packArrayHeader(1).packLong(4).packString("token_ids").packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packString("block_size").packInt(16).packString("cache_salt").packString("tenant-b");
    return p.toByteArray();
  }

  @Test
  void sglangSaltedEventsFeedTheirTenantsChainAndTheRestOfTheBatchApplies() throws IOException {
    byte[] batch = Batches.arrays()
        .raw(sglangStored(1, 0, null, null))
        .raw(sglangStored(2, 16, "tenant-a", "s-1"))
        .raw(sglangStored(3, 32, null, "s-2")) // a session id alone changes nothing
        .raw(saltedMapEvent())
        .removed(1)
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {1}, range(0, 16), 16),
        RecordingSink.storedFor("tenant-a", "r1", "m", null, new long[] {2}, range(16, 32), 16),
        stored("r1", "m", null, new long[] {3}, range(32, 48), 16),
        RecordingSink.storedFor("tenant-b", "r1", "m", null, new long[] {4}, range(0, 16), 16),
        removed("r1", 1));
    KvEventStats stats = decoder.stats();
    assertThat(stats.skippedTotal()).isZero();
    assertThat(stats.decodeErrors()).isZero();
  }

  /** vLLM's map {@code BlockStored} of one block with the given extra keys and LoRA name. */
  private static byte[] vllmStored(long hash, int from, String lora, Long parent,
      String... extraKeys) throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(10).packString("type").packString("BlockStored")
        .packString("block_hashes").packArrayHeader(1).packLong(hash)
        .packString("parent_block_hash");
    if (parent == null) {
      p.packNil();
    } else {
      p.packLong(parent);
    }
    p.packString("token_ids").packArrayHeader(16);
    for (int t = from; t < from + 16; t++) {
      p.packInt(t);
    }
    p.packString("block_size").packInt(16).packString("lora_id").packNil()
        .packString("medium").packString("GPU").packString("lora_name");
    if (lora == null) {
      p.packNil();
    } else {
      p.packString(lora);
    }
    p.packString("extra_keys").packArrayHeader(1);
    if (extraKeys.length == 0) {
      p.packNil();
    } else {
      p.packArrayHeader(extraKeys.length);
      for (String k : extraKeys) {
        p.packString(k);
      }
    }
    p.packString("group_idx").packInt(0);
    return p.toByteArray();
  }

  @Test
  void aFirstBlocksOneExtraKeyIsItsSaltAndAnyOtherExtraKeyNeverMatchesText() throws IOException {
    byte[] batch = Batches.arrays()
        .raw(vllmStored(1, 0, null, null))
        .raw(vllmStored(2, 16, null, null, "tenant-a")) // the prompt's first block: the salt
        .raw(vllmStored(3, 32, "adapter-1", null, "adapter-1")) // the LoRA name alone
        .raw(vllmStored(4, 48, "adapter-1", null, "adapter-1", "tenant-b")) // LoRA and salt
        .raw(vllmStored(5, 64, null, 4L, "0f3a9c-image")) // past the first block: multimodal
        .raw(vllmStored(6, 80, null, null, "0f3a9c-image", "tenant-a")) // image and salt
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {1}, range(0, 16), 16),
        RecordingSink.storedFor("tenant-a", "r1", "m", null, new long[] {2}, range(16, 32), 16),
        stored("r1", "adapter-1", null, new long[] {3}, range(32, 48), 16),
        RecordingSink.storedFor("tenant-b", "r1", "adapter-1", null, new long[] {4},
            range(48, 64), 16));
    assertThat(decoder.stats().skipped(KvEventSkip.EXTRA_KEYS)).isEqualTo(2);
    assertThat(decoder.stats().decodeErrors()).isZero();
  }

  private static byte[] groupStored(long hash, int group, String kind) throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(7).packString("type").packString("BlockStored").packString("block_hashes")
        .packArrayHeader(1).packLong(hash).packString("parent_block_hash").packNil()
        .packString("token_ids").packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packString("block_size").packInt(16).packString("group_idx").packInt(group)
        .packString("kv_cache_spec_kind").packString(kind);
    return p.toByteArray();
  }

  private static byte[] groupRemoved(long hash, int group) throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    // array form: ["BlockRemoved", hashes, medium, group_idx]
    p.packArrayHeader(4).packString("BlockRemoved").packArrayHeader(1).packLong(hash)
        .packString("GPU").packInt(group);
    return p.toByteArray();
  }

  @Test
  void aSlidingWindowGroupDroppingItsCopyLeavesTheFullAttentionBlock() throws IOException {
    byte[] batch = Batches.arrays()
        .raw(groupStored(1, 0, "full_attention"))
        .raw(groupStored(1, 1, "sliding_window")) // a hybrid model: the same hash in group 1
        .raw(groupRemoved(1, 1))
        .raw(groupRemoved(1, 0))
        .raw(groupRemoved(2, 7)) // a group never seen storing: removed, as it may be full attention
        .build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {1}, range(0, 16), 16),
        removed("r1", 1),
        removed("r1", 2));
    assertThat(decoder.stats().skipped(KvEventSkip.NOT_FULL_ATTENTION)).isEqualTo(2);
  }

  @Test
  void aLoraBlockKnownOnlyByItsIdIsNotTakenForTheBaseModel() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    // vLLM 0.9's six fields, lora_id 3 and no lora_name
    p.packArrayHeader(6).packString("BlockStored").packArrayHeader(1).packInt(6).packNil()
        .packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packInt(16).packInt(3);
    byte[] batch = Batches.arrays().raw(p.toByteArray())
        .raw(vllmStored(7, 16, "adapter-3", null, "adapter-3")).build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(
        stored("r1", "adapter-3", null, new long[] {7}, range(16, 32), 16));
    assertThat(decoder.stats().skipped(KvEventSkip.UNNAMED_LORA)).isEqualTo(1);
  }

  @Test
  void blocksInRemoteStorageAreNotTheReplicas() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(6).packString("type").packString("BlockStored").packString("block_hashes")
        .packArrayHeader(1).packLong(1).packString("token_ids").packArrayHeader(16);
    for (int t = 0; t < 16; t++) {
      p.packInt(t);
    }
    p.packString("block_size").packInt(16).packString("medium").packNil()
        .packString("locality").packString("REMOTE");
    MessageBufferPacker removed = MessagePack.newDefaultBufferPacker();
    removed.packMapHeader(3).packString("type").packString("BlockRemoved")
        .packString("block_hashes").packArrayHeader(1).packLong(1)
        .packString("locality").packString("LOCAL");
    byte[] batch = Batches.arrays().raw(p.toByteArray()).raw(removed.toByteArray()).build();
    assertThat(decoder.decode(batch)).isTrue();
    assertThat(sink.calls()).containsExactly(removed("r1", 1));
    assertThat(decoder.stats().skipped(KvEventSkip.NOT_GPU)).isEqualTo(1);
  }
}
