package io.affinityrouter.core.engine;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.Replica;
import io.affinityrouter.core.kvevents.KvEventStats;
import io.affinityrouter.core.kvevents.KvEventSubscriber;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.URI;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One {@link KvEventSubscriber} per endpoint that names a KV-event URI, kept in step with the fleet's
 * endpoints. Loaded only when a fleet view is given a sink, so JeroMQ and msgpack-java stay optional.
 * Thread-safe (every method synchronized; subscribers start and stop on their own threads).
 */
final class KvEventFeeds implements AutoCloseable {
  private final PrefixCacheEvents sink;
  private final Map<String, Feed> feeds = new LinkedHashMap<>(); // guarded by this
  private Map<String, Set<String>> scrapedModels = Map.of(); // guarded by this
  private Collection<ReplicaEndpoint> endpoints = List.of(); // guarded by this
  private boolean started;
  private boolean closed;

  /** What a subscriber was built from: a change of any of these means a new subscriber. */
  private record Key(URI events, Optional<URI> replay, int ranks, Set<String> models) {
    /** The endpoint's models, else those its scrapes found (a vLLM server names its model). */
    static Key of(ReplicaEndpoint e, Map<String, Set<String>> scraped) {
      return new Key(e.kvEventsUri().orElseThrow(), e.kvEventsReplayUri(), e.dataParallelRanks(),
          e.models().isEmpty() ? scraped.getOrDefault(e.id(), Set.of()) : e.models());
    }
  }

  private record Feed(Key key, KvEventSubscriber subscriber) {}

  KvEventFeeds(PrefixCacheEvents sink) {
    this.sink = Objects.requireNonNull(sink, "sink");
  }

  /** Starts the subscribers of the endpoints last given to {@link #sync}, and any later ones. */
  synchronized void start(Collection<ReplicaEndpoint> endpoints) {
    if (closed) {
      return;
    }
    started = true;
    sync(endpoints);
  }

  /**
   * Subscribes to the endpoints' KV events: new endpoints get a subscriber, changed ones a new one,
   * removed ones lose theirs. Nothing runs before {@link #start}.
   */
  synchronized void sync(Collection<ReplicaEndpoint> endpoints) {
    this.endpoints = endpoints;
    if (!started || closed) {
      return;
    }
    Set<String> present = new HashSet<>();
    for (ReplicaEndpoint e : endpoints) {
      if (e.kvEventsUri().isEmpty()) {
        continue;
      }
      present.add(e.id());
      Key key = Key.of(e, scrapedModels);
      Feed old = feeds.get(e.id());
      if (old != null && old.key.equals(key)) {
        continue;
      }
      if (old != null) {
        old.subscriber.close();
      }
      KvEventSubscriber s = KvEventSubscriber.builder(sink)
          .replicaId(e.id())
          // one model: its blocks are that model's; several: the engine's events do not say whose
          .model(key.models.size() == 1 ? key.models.iterator().next() : null)
          .endpoint(key.events.toString())
          .replayEndpoint(key.replay.map(URI::toString).orElse(null))
          .dataParallelSize(key.ranks)
          .build();
      s.start();
      feeds.put(e.id(), new Feed(key, s));
    }
    feeds.entrySet().removeIf(entry -> {
      if (present.contains(entry.getKey())) {
        return false;
      }
      entry.getValue().subscriber.close();
      return true;
    });
  }

  /**
   * Records the models each replica's scrape shows; an endpoint that names none is resubscribed
   * when they change, so its blocks are stored for the model it serves.
   */
  synchronized void scraped(List<Replica> snapshot) {
    Map<String, Set<String>> models = new HashMap<>();
    for (Replica r : snapshot) {
      if (!r.models().isEmpty()) {
        models.put(r.id(), Set.copyOf(r.models().keySet()));
      }
    }
    if (!models.equals(scrapedModels)) {
      scrapedModels = Map.copyOf(models);
      sync(endpoints);
    }
  }

  /** Each subscribed replica's counters, by replica id. */
  synchronized Map<String, KvEventStats> stats() {
    Map<String, KvEventStats> out = new HashMap<>();
    feeds.forEach((id, f) -> out.put(id, f.subscriber.stats()));
    return Map.copyOf(out);
  }

  @Override
  public synchronized void close() {
    closed = true;
    feeds.values().forEach(f -> f.subscriber.close());
    feeds.clear();
  }
}
