package io.affinityrouter.core.kvevents;

/**
 * ZeroMQ endpoints of the engines' publishers: validation, and the per-rank endpoint of a
 * data-parallel engine (vLLM offsets the TCP port by the rank and suffixes {@code inproc} names
 * with {@code _dp<rank>}). Stateless.
 */
final class Endpoints {
  private Endpoints() {}

  /** Checks {@code endpoint} for connecting to ranks {@code 0 .. ranks - 1}; returns it. */
  static String check(String endpoint, String name, int ranks) {
    if (endpoint.startsWith("tcp://")) {
      int colon = endpoint.lastIndexOf(':');
      String host = endpoint.substring("tcp://".length(), Math.max(colon, "tcp://".length()));
      int port = colon > "tcp:/".length() ? port(endpoint.substring(colon + 1)) : -1;
      if (host.isEmpty() || host.equals("*") || port < 1 || port + ranks - 1 > 65_535) {
        throw new IllegalArgumentException(name + ": " + endpoint
            + " (expected: tcp://host:port to connect to, port + dataParallelSize - 1 <= 65535)");
      }
      return endpoint;
    }
    if (endpoint.startsWith("inproc://") && endpoint.length() > "inproc://".length()) {
      return endpoint;
    }
    if (endpoint.startsWith("ipc://") && endpoint.length() > "ipc://".length()) {
      if (ranks > 1) {
        throw new IllegalArgumentException(name + ": " + endpoint
            + " (expected: tcp:// or inproc:// with dataParallelSize " + ranks + ")");
      }
      return endpoint;
    }
    throw new IllegalArgumentException(
        name + ": " + endpoint + " (expected: tcp://host:port, ipc://path or inproc://name)");
  }

  /** The endpoint of data-parallel rank {@code rank}, as vLLM's publisher binds it. */
  static String forRank(String endpoint, int rank) {
    if (rank == 0) {
      return endpoint;
    }
    if (endpoint.startsWith("inproc://")) {
      return endpoint + "_dp" + rank;
    }
    int colon = endpoint.lastIndexOf(':');
    return endpoint.substring(0, colon + 1) + (port(endpoint.substring(colon + 1)) + rank);
  }

  private static int port(String digits) {
    if (digits.isEmpty() || digits.length() > 5 || !digits.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Integer.parseInt(digits);
  }
}
