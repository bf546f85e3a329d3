package io.affinityrouter.core;

import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.FleetLimits;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.ReplicaFilter;
import io.affinityrouter.spi.ReplicaScorer;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledExecutorService;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/** What an {@link AffinityRouter.Builder} was told: every option, at its default until set. */
final class RouterSettings {
  @Nullable BindingStore store;
  @Nullable String storeProvider;
  Map<String, String> storeProperties = Map.of();
  Duration bindingTtl = AffinityRouter.Builder.DEFAULT_BINDING_TTL;
  Duration storeTimeout = AffinityRouter.Builder.DEFAULT_STORE_TIMEOUT;
  Duration storeBackoff = AffinityRouter.Builder.DEFAULT_STORE_BACKOFF;
  Duration storeMaxBackoff = AffinityRouter.Builder.DEFAULT_STORE_MAX_BACKOFF;
  InstantSource clock = InstantSource.system();
  @Nullable RandomGenerator random;
  int tokenBlockSize = BlockHasher.DEFAULT_TOKEN_BLOCK_SIZE;
  int textBlockChars = BlockHasher.DEFAULT_TEXT_BLOCK_CHARS;
  int maxPromptBlocks = BlockHasher.DEFAULT_MAX_PROMPT_BLOCKS;
  long hashSeed;
  long prefixIndexEntries = AffinityRouter.Builder.DEFAULT_PREFIX_INDEX_ENTRIES;
  EngineProfile engineProfile = AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE;
  int topK = AffinityRouter.Builder.DEFAULT_TOP_K;
  Duration rampUp = AffinityRouter.Builder.DEFAULT_RAMP_UP;
  double minRampWeight = AffinityRouter.Builder.DEFAULT_MIN_RAMP_WEIGHT;
  int maxInFlightRequests = Integer.MAX_VALUE;
  long maxInFlightTokens = Long.MAX_VALUE;
  Duration atLimitRetryAfter = AffinityRouter.Builder.DEFAULT_AT_LIMIT_RETRY_AFTER;
  Duration unavailableRetryAfter = AffinityRouter.Builder.DEFAULT_UNAVAILABLE_RETRY_AFTER;
  long rememberedSessions = AffinityRouter.Builder.DEFAULT_REMEMBERED_SESSIONS;
  @Nullable LoadExchange loadExchange;
  boolean storeLoadExchange = true;
  @Nullable String routerId;
  @Nullable FleetLimits fleetLimits;
  Duration fleetLeaseTime = AffinityRouter.Builder.DEFAULT_FLEET_LEASE_TIME;
  Duration loadExchangeInterval = AffinityRouter.Builder.DEFAULT_LOAD_EXCHANGE_INTERVAL;
  int maxHeldRequests; // 0: holding off, the default; holdQueue sets all three
  long maxHeldBytes;
  Duration maxHold = Duration.ZERO;
  @Nullable ScheduledExecutorService holdScheduler;
  Duration replicaIdleTimeout = AffinityRouter.Builder.DEFAULT_REPLICA_IDLE_TIMEOUT;
  Executor executor = ForkJoinPool.commonPool();
  final List<ReplicaScorer> scorers = new ArrayList<>();
  final List<ReplicaFilter> filters = new ArrayList<>();
  final List<RoutingListener> listeners = new ArrayList<>();
  // Tuning constants, not options: only this package's tests change them (the builder's
  // package-private hooks), to check that each is applied.
  double recomputeWeight = Score.RECOMPUTE_WEIGHT;
  double affinityBudgetQuantile = AffinityBudget.QUANTILE;
  double holderSavingsMultiple = Pick.HOLDER_SAVINGS_MULTIPLE;
  double holdWaitSeconds = DefaultRouter.HOLD_WAIT_SECONDS;
}
