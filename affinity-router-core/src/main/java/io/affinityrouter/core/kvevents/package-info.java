/**
 * Exact prefix-cache events from the engines: a subscriber to vLLM's and SGLang's KV-event streams
 * (ZeroMQ PUB/SUB, msgpack) that feeds {@link io.affinityrouter.PrefixCacheEvents}, normally
 * {@link io.affinityrouter.Router#cacheEvents()}.
 *
 * <ul>
 *   <li>{@link io.affinityrouter.core.kvevents.KvEventSubscriber}: one replica's subscription (one
 *       socket per data-parallel rank), on its own threads, with sequence-gap detection, replay
 *       from the publisher's ROUTER socket, and reconnects;
 *   <li>{@link io.affinityrouter.core.kvevents.KvEventDecoder}: the payload decoder alone (both of
 *       vLLM's event encodings, SGLang's pages), without sockets;
 *   <li>{@link io.affinityrouter.core.kvevents.KvEventStats}: what they counted.
 * </ul>
 *
 * <p>JeroMQ ({@code org.zeromq:jeromq}) and msgpack-java ({@code org.msgpack:msgpack-core}) are
 * optional dependencies of the core: a gateway that uses this package adds them.
 *
 * <p>Null-marked: parameters and results are non-null unless annotated {@code @Nullable}.
 *
 * <p>{@link io.affinityrouter.Unstable}: this package may still change incompatibly in a minor
 * release.
 */
@NullMarked
@Unstable
package io.affinityrouter.core.kvevents;

import io.affinityrouter.Unstable;
import org.jspecify.annotations.NullMarked;
