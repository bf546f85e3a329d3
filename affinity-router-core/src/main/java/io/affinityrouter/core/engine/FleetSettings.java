package io.affinityrouter.core.engine;

import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/** A {@link FleetView}'s settings, checked by its builder. Immutable. */
record FleetSettings(
    ReplicaDiscovery discovery,
    List<ReplicaEndpoint> initialEndpoints,
    @Nullable HttpClient httpClient,
    Duration scrapeInterval,
    Duration scrapeTimeout,
    String metricsPath,
    int maxResponseBytes,
    int failuresToUnhealthy,
    Duration initialBackoff,
    Duration maxBackoff,
    double backoffJitter,
    Duration discoveryInterval,
    Duration actionTimeout,
    boolean probeSleepState,
    LongSupplier ticker,
    InstantSource clock,
    DoubleSupplier random) {}
