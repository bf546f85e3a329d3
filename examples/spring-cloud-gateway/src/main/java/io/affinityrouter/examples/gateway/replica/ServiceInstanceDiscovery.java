package io.affinityrouter.examples.gateway.replica;

import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * The replicas of a core {@link io.affinityrouter.core.engine.FleetView}, from Spring Cloud
 * service instances: those of the services named in {@code affinity-router.scrape.services}, asked
 * of the {@link DiscoveryClient} at each poll (on the fleet view's thread, never an event loop), and
 * those the affinity load balancer is given for a request ({@link #listed}), pushed to the fleet
 * view as soon as they differ from what it knows.
 *
 * <p>An instance becomes a {@link ReplicaEndpoint} with the id {@link #replicaId} and its URI as
 * base URL; its metadata may name the engine ({@code engine: vllm|sglang}), the models
 * ({@code models: a,b}) and the KV-event publisher ({@code kv-events: tcp://host:5557},
 * {@code kv-events-replay: tcp://host:5558}, {@code kv-events-dp-ranks: 2}).
 *
 * <p>Thread-safe. {@link #listed} runs on the event loop for every routed request: it compares ids
 * and URIs and allocates only when the instances changed.
 */
public final class ServiceInstanceDiscovery implements ReplicaDiscovery {
  private final @Nullable DiscoveryClient client;
  private final Set<String> services = ConcurrentHashMap.newKeySet();
  private final Map<String, List<ReplicaEndpoint>> byService = new ConcurrentHashMap<>();
  private final List<Consumer<List<ReplicaEndpoint>>> watchers = new CopyOnWriteArrayList<>();

  /**
   * Creates the discovery.
   *
   * @param client asked for the instances of known services at each poll; none: only what the
   *     load balancers list
   * @param services services polled from the start
   */
  public ServiceInstanceDiscovery(@Nullable DiscoveryClient client, Collection<String> services) {
    this.client = client;
    services.forEach(s -> this.services.add(Objects.requireNonNull(s, "service")));
  }

  /** The replica id of an instance: its instance id, else {@code host:port}. */
  public static String replicaId(ServiceInstance instance) {
    String id = instance.getInstanceId();
    return id != null && !id.isBlank() ? id : instance.getHost() + ":" + instance.getPort();
  }

  /**
   * Records the instances a load balancer was given for {@code serviceId}; when they differ from
   * the last ones, pushes the new set of replicas to the watchers.
   */
  public void listed(String serviceId, List<ServiceInstance> instances) {
    services.add(serviceId);
    List<ReplicaEndpoint> known = byService.get(serviceId);
    if (known != null && same(known, instances)) {
      return;
    }
    byService.put(serviceId, endpoints(instances));
    List<ReplicaEndpoint> all = union();
    watchers.forEach(w -> w.accept(all));
  }

  @Override
  public List<ReplicaEndpoint> endpoints() {
    DiscoveryClient c = client;
    if (c != null) {
      for (String service : services) {
        try {
          byService.put(service, endpoints(c.getInstances(service)));
        } catch (RuntimeException e) {
          // keep what we had for this service
        }
      }
    }
    return union();
  }

  @Override
  public AutoCloseable watch(Consumer<List<ReplicaEndpoint>> onChange) {
    watchers.add(Objects.requireNonNull(onChange, "onChange"));
    return () -> watchers.remove(onChange);
  }

  private List<ReplicaEndpoint> union() {
    Map<String, ReplicaEndpoint> all = new LinkedHashMap<>();
    new java.util.TreeMap<>(byService).values()
        .forEach(list -> list.forEach(e -> all.putIfAbsent(e.id(), e)));
    return List.copyOf(all.values());
  }

  private static boolean same(List<ReplicaEndpoint> known, List<ServiceInstance> instances) {
    Set<String> ids = new LinkedHashSet<>();
    for (ServiceInstance i : instances) {
      ids.add(replicaId(i));
    }
    if (ids.size() != known.size()) {
      return false;
    }
    for (ServiceInstance i : instances) {
      boolean found = false;
      for (ReplicaEndpoint e : known) {
        if (e.id().equals(replicaId(i))) {
          found = e.baseUri().equals(base(i.getUri()));
          break;
        }
      }
      if (!found) {
        return false;
      }
    }
    return true;
  }

  private static List<ReplicaEndpoint> endpoints(List<ServiceInstance> instances) {
    List<ReplicaEndpoint> out = new ArrayList<>(instances.size());
    Set<String> seen = new LinkedHashSet<>();
    for (ServiceInstance i : instances) {
      if (!seen.add(replicaId(i))) {
        continue;
      }
      try {
        out.add(endpoint(i));
      } catch (RuntimeException e) {
        try {
          out.add(ReplicaEndpoint.builder(replicaId(i), i.getUri()).build()); // bad metadata
        } catch (RuntimeException notHttp) {
          // an instance without an http(s) URI cannot be scraped or routed to
        }
      }
    }
    return out;
  }

  private static URI base(URI uri) {
    String s = uri.toString();
    return URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
  }

  /** The endpoint of an instance, with what its metadata says (see the class comment). */
  static ReplicaEndpoint endpoint(ServiceInstance instance) {
    ReplicaEndpoint.Builder b = ReplicaEndpoint.builder(replicaId(instance), instance.getUri());
    Map<String, String> meta = instance.getMetadata() == null ? Map.of() : instance.getMetadata();
    String engine = meta.getOrDefault("engine", "");
    if (engine.equalsIgnoreCase("vllm")) {
      b.engine(ReplicaEndpoint.Engine.VLLM);
    } else if (engine.equalsIgnoreCase("sglang")) {
      b.engine(ReplicaEndpoint.Engine.SGLANG);
    }
    for (String model : meta.getOrDefault("models", "").split(",")) {
      if (!model.isBlank()) {
        b.model(model.strip());
      }
    }
    String kv = meta.get("kv-events");
    if (kv != null && !kv.isBlank()) {
      b.kvEventsUri(URI.create(kv.strip()));
      String replay = meta.get("kv-events-replay");
      if (replay != null && !replay.isBlank()) {
        b.kvEventsReplayUri(URI.create(replay.strip()));
      }
      String ranks = meta.get("kv-events-dp-ranks");
      if (ranks != null && !ranks.isBlank()) {
        b.dataParallelRanks(Integer.parseInt(ranks.strip()));
      }
    }
    return b.build();
  }
}
