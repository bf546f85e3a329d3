package io.affinityrouter;

/**
 * The router's accounting of one routed request: while it is open, the request counts as committed
 * work (in-flight request, prompt tokens still to prefill, expected decode tokens) on its replica.
 *
 * <p>Close it when the request ends, however it ends (success, error, client disconnect): the
 * accounting is released exactly once, on the first {@link #close()} or {@link #complete(int)};
 * later calls do nothing. Implementations are thread-safe: a lease may be closed from any thread,
 * even concurrently.
 */
public interface RequestLease extends AutoCloseable {

  /** The id of the replica the request was routed to. */
  String replicaId();

  /**
   * Tells the router that the first output token arrived: the prompt's prefill is done, so it stops
   * counting as prefill work. Optional; calling it improves the load estimate for streaming
   * gateways. Does nothing after the lease is closed, and nothing on a second call.
   */
  void markFirstToken();

  /**
   * Ends the lease with the number of output tokens the request produced, which feeds the router's
   * output-throughput and output-length estimates. Equivalent to {@link #close()} for the in-flight
   * accounting; does nothing if the lease is already closed.
   *
   * @throws IllegalArgumentException if {@code outputTokens < 0}
   */
  void complete(int outputTokens);

  /** Releases the in-flight accounting if not released yet. Never throws. */
  @Override
  void close();

  /** Whether the lease has been released. */
  boolean isClosed();
}
