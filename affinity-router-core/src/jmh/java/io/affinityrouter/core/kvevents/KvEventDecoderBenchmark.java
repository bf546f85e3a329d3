package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the KV-event subscriber costs per event, without the socket: {@link KvEventDecoder} decodes
 * one batch holding one {@code BlockStored} of {@code blocks} 16-token blocks (vLLM's block size,
 * random uint64 hashes, starting a prompt) in either encoding, and hands it to the sink:
 * {@code NOOP} (a sink that only consumes the arguments: the decoder's share) or {@code ROUTER}
 * (a router's {@code cacheEvents()} over 64 replicas: the router hashes the tokens and records the
 * blocks in its prefix index). 1,024 distinct batches are cycled, so the index keeps learning new
 * blocks. {@code -prof gc} gives the allocation per event.
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar KvEventDecoderBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class KvEventDecoderBenchmark {
  private static final int BATCHES = 1024;
  private static final int BLOCK = 16;

  /** The sink behind the decoder. */
  public enum Sink { NOOP, ROUTER }

  @Param({"1", "16", "128"})
  int blocks;

  @Param({"ARRAY", "MAP"})
  String encoding;

  @Param({"NOOP", "ROUTER"})
  Sink sink;

  private byte[][] batches;
  private KvEventDecoder decoder;
  private int next;

  /** Builds the batches and the decoder. */
  @Setup(Level.Trial)
  public void setUp(Blackhole blackhole) {
    SplittableRandom random = new SplittableRandom(22);
    batches = new byte[BATCHES][];
    for (int b = 0; b < BATCHES; b++) {
      long[] hashes = new long[blocks];
      for (int i = 0; i < blocks; i++) {
        hashes[i] = random.nextLong();
      }
      int[] tokens = random.ints(blocks * BLOCK, 0, 150_000).toArray();
      Batches batch = encoding.equals("MAP") ? Batches.maps() : Batches.arrays();
      batches[b] = batch.stored(hashes, null, tokens, BLOCK).build();
    }
    PrefixCacheEvents events;
    if (sink == Sink.ROUTER) {
      Router router = AffinityRouter.builder().build();
      List<Replica> fleet = new java.util.ArrayList<>();
      for (int i = 0; i < 64; i++) {
        fleet.add(Replica.of("r" + i));
      }
      // the router learns its replicas from a decision
      router.select(RoutingRequest.builder().promptTokens(new int[BLOCK]).build(), fleet)
          .lease().close();
      events = router.cacheEvents();
    } else {
      events = new ConsumingSink(blackhole);
    }
    decoder = KvEventDecoder.create(events, "r7", "m");
  }

  /** Decodes one batch (one BlockStored event) and applies it. */
  @Benchmark
  public boolean decodeAndApply() {
    byte[] batch = batches[next];
    next = (next + 1) & (BATCHES - 1);
    return decoder.decode(batch);
  }

  /** A sink that only hands its arguments to the blackhole. */
  private static final class ConsumingSink implements PrefixCacheEvents {
    private final Blackhole blackhole;

    ConsumingSink(Blackhole blackhole) {
      this.blackhole = blackhole;
    }

    @Override
    public void blocksStored(String replicaId, String model, String tenant, Long parent,
        long[] hashes, int[] tokens, int blockSize) {
      blackhole.consume(parent);
      blackhole.consume(hashes);
      blackhole.consume(tokens);
    }

    @Override
    public void blocksRemoved(String replicaId, long[] hashes) {
      blackhole.consume(hashes);
    }

    @Override
    public void allBlocksCleared(String replicaId) {}

    @Override
    public int tokensPerBlock() {
      return BLOCK;
    }
  }
}
