package io.affinityrouter.examples.micrometer;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.RoutingListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Publishes the router's decisions as Micrometer meters. Names are dot-separated and lower case,
 * units are the base unit of the meter type (seconds for the timer), tag values are lower case; a
 * Prometheus registry shows them as {@code affinity_router_decisions_total},
 * {@code affinity_router_select_seconds} and so on. The module README lists them (metrics
 * catalogue).
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #DECISIONS}</td><td>counter</td><td>reason, model, degraded</td>
 *       <td>every decision, routed or not</td></tr>
 *   <tr><td>{@value #DEGRADED}</td><td>counter</td><td>model</td>
 *       <td>decisions made without the binding store</td></tr>
 *   <tr><td>{@value #REPINS}</td><td>counter</td><td>cause</td>
 *       <td>sessions moved to another replica</td></tr>
 *   <tr><td>{@value #WAKE_REQUESTS}</td><td>counter</td><td>model</td>
 *       <td>wake-ups asked of a sleeping replica</td></tr>
 *   <tr><td>{@value #MATCHED_BLOCKS}</td><td>distribution summary (blocks)</td><td>model</td>
 *       <td>prompt blocks found in the chosen replica's cached prefix, per routed decision</td></tr>
 *   <tr><td>{@value #PROMPT_TOKENS}</td><td>counter</td><td>model</td>
 *       <td>prompt tokens of routed decisions (estimated for text prompts)</td></tr>
 *   <tr><td>{@value #MATCHED_TOKENS}</td><td>counter</td><td>model</td>
 *       <td>of those, tokens in blocks found in the chosen replica's cached prefix; over
 *       {@value #PROMPT_TOKENS}, the prefix-cache locality the router achieved</td></tr>
 *   <tr><td>{@value #SELECT}</td><td>timer</td><td>routed</td>
 *       <td>time spent in {@code select}/{@code selectAsync}, store wait included</td></tr>
 *   <tr><td>{@value #STORE_FAILURES}</td><td>counter</td><td>—</td>
 *       <td>binding store failures and timeouts</td></tr>
 *   <tr><td>{@value #PLUGIN_FAILURES}</td><td>counter</td><td>plugin</td>
 *       <td>scorer or filter plugins that threw</td></tr>
 * </table>
 *
 * <p>The {@code model} tag takes the request's model name, {@value #NO_MODEL} without one, and
 * {@value #OTHER_MODEL} once {@link #MAX_MODEL_TAGS} distinct names have been seen: model names come
 * from clients, and must not grow the registry without bound. Thread-safe, never blocks: meters are
 * looked up in concurrent maps.
 */
public final class MicrometerRoutingListener implements RoutingListener {
  /** Decisions, by reason, model and degradation. */
  public static final String DECISIONS = "affinity.router.decisions";
  /** Degraded decisions, by model. */
  public static final String DEGRADED = "affinity.router.decisions.degraded";
  /** Repins, by cause. */
  public static final String REPINS = "affinity.router.repins";
  /** Wake requests, by model. */
  public static final String WAKE_REQUESTS = "affinity.router.wake.requests";
  /** Matched prefix blocks per routed decision, by model. */
  public static final String MATCHED_BLOCKS = "affinity.router.prefix.matched.blocks";
  /** Prompt tokens of routed decisions, by model. */
  public static final String PROMPT_TOKENS = "affinity.router.prompt.tokens";
  /**
   * Prompt tokens of routed decisions the router took as cached on the chosen replica (its
   * {@code ScoreBreakdown.cachedFraction}, whatever the router's block size), by model.
   */
  public static final String MATCHED_TOKENS = "affinity.router.prefix.matched.tokens";
  /** Select latency. */
  public static final String SELECT = "affinity.router.select";
  /** Binding store failures. */
  public static final String STORE_FAILURES = "affinity.router.store.failures";
  /** Plugin failures, by plugin. */
  public static final String PLUGIN_FAILURES = "affinity.router.plugin.failures";
  /** The model tag of requests without a model: {@value}. */
  public static final String NO_MODEL = "none";
  /** The model tag once {@link #MAX_MODEL_TAGS} models were seen: {@value}. */
  public static final String OTHER_MODEL = "other";
  /** The most distinct model tag values: {@value}. */
  public static final int MAX_MODEL_TAGS = 100;

  private final MeterRegistry registry;
  private final Map<String, String> modelTags = new ConcurrentHashMap<>();
  private final Map<DecisionKey, Counter> decisions = new ConcurrentHashMap<>();
  private final Map<String, Counter> degraded = new ConcurrentHashMap<>();
  private final Map<RepinCause, Counter> repins = new ConcurrentHashMap<>();
  private final Map<String, Counter> wakes = new ConcurrentHashMap<>();
  private final Map<String, DistributionSummary> matched = new ConcurrentHashMap<>();
  private final Map<String, Counter> pluginFailures = new ConcurrentHashMap<>();
  private final Map<String, Counter> promptTokens = new ConcurrentHashMap<>();
  private final Map<String, Counter> matchedTokens = new ConcurrentHashMap<>();
  private final Timer selectRouted;
  private final Timer selectNotRouted;
  private final Counter storeFailures;

  /** Creates the listener; meters are registered in {@code registry} as they are first needed. */
  public MicrometerRoutingListener(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.selectRouted = selectTimer(true);
    this.selectNotRouted = selectTimer(false);
    this.storeFailures = Counter.builder(STORE_FAILURES)
        .description("Binding store failures and timeouts (decisions routed degraded)")
        .register(registry);
  }

  private Timer selectTimer(boolean routed) {
    return Timer.builder(SELECT)
        .description("Time to a routing decision, binding store wait included")
        .tag("routed", Boolean.toString(routed))
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(1_000)) // selects take microseconds...
        .maximumExpectedValue(Duration.ofSeconds(1)) // ...and the store wait is bounded
        .register(registry);
  }

  @Override
  public void onDecision(RoutingRequest request, RoutingDecision decision, long selectNanos) {
    String model = modelTag(request);
    decisions.computeIfAbsent(new DecisionKey(decision.reason(), model, decision.isDegraded()),
        k -> Counter.builder(DECISIONS)
            .description("Routing decisions, routed or not, by reason")
            .tag("reason", k.reason().name().toLowerCase(Locale.ROOT))
            .tag("model", k.model())
            .tag("degraded", Boolean.toString(k.degraded()))
            .register(registry))
        .increment();
    if (decision.isDegraded()) {
      degraded.computeIfAbsent(model, m -> Counter.builder(DEGRADED)
          .description("Decisions routed without the binding store (deterministic fallback)")
          .tag("model", m)
          .register(registry)).increment();
    }
    if (decision.isRouted()) {
      matched.computeIfAbsent(model, m -> DistributionSummary.builder(MATCHED_BLOCKS)
          .description("Prompt blocks found in the chosen replica's cached prefix")
          .baseUnit("blocks")
          .tag("model", m)
          .register(registry)).record(decision.matchedBlocks());
      int prompt = request.promptTokenCount();
      promptTokens.computeIfAbsent(model, m -> Counter.builder(PROMPT_TOKENS)
          .description("Prompt tokens of routed requests (estimated for text prompts)")
          .baseUnit("tokens")
          .tag("model", m)
          .register(registry)).increment(prompt);
      matchedTokens.computeIfAbsent(model, m -> Counter.builder(MATCHED_TOKENS)
          .description("Prompt tokens the router took as cached on the chosen replica")
          .baseUnit("tokens")
          .tag("model", m)
          .register(registry))
          .increment(Math.round(prompt * decision.scores().cachedFraction()));
    }
    (decision.isRouted() ? selectRouted : selectNotRouted)
        .record(Math.max(0, selectNanos), TimeUnit.NANOSECONDS);
  }

  @Override
  public void onRepin(BindingKey key, String fromReplicaId, String toReplicaId, RepinCause cause) {
    repins.computeIfAbsent(cause, c -> Counter.builder(REPINS)
        .description("Sessions moved from their bound replica to another")
        .tag("cause", c.name().toLowerCase(Locale.ROOT))
        .register(registry)).increment();
  }

  @Override
  public void onWakeRequested(Replica replica, String model) {
    wakes.computeIfAbsent(modelTag(model), m -> Counter.builder(WAKE_REQUESTS)
        .description("Requests to wake a model sleeping on every replica that hosts it")
        .tag("model", m)
        .register(registry)).increment();
  }

  @Override
  public void onStoreFailure(Throwable cause) {
    storeFailures.increment();
  }

  @Override
  public void onPluginFailure(String pluginName, Throwable cause) {
    pluginFailures.computeIfAbsent(pluginName, p -> Counter.builder(PLUGIN_FAILURES)
        .description("Scorer or filter plugins that threw or returned an invalid score")
        .tag("plugin", p)
        .register(registry)).increment();
  }

  private String modelTag(RoutingRequest request) {
    return request.model().map(this::modelTag).orElse(NO_MODEL);
  }

  private String modelTag(String model) {
    String tag = modelTags.get(model);
    if (tag != null) {
      return tag;
    }
    if (modelTags.size() >= MAX_MODEL_TAGS) {
      return OTHER_MODEL;
    }
    return modelTags.computeIfAbsent(model, m -> m);
  }

  private record DecisionKey(RoutingReason reason, String model, boolean degraded) {}
}
