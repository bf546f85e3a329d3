package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The models the gateway serves: every model some backend lists in its metrics, whatever its state
 * (a sleeping model is woken on demand, one on an unhealthy backend is still the fleet's), as
 * OpenAI's {@code GET /v1/models} list.
 */
final class Models {
  private Models() {}

  /** Whether some replica hosts {@code model}. */
  static boolean served(List<Replica> replicas, String model) {
    for (Replica r : replicas) {
      if (r.models().containsKey(model)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The {@code /v1/models} answer: {@code {"object":"list","data":[{"id":...,"object":"model",
   * "created":...,"owned_by":...}]}}, sorted by id.
   */
  static byte[] list(List<Replica> replicas, long createdEpochSeconds) {
    TreeSet<String> names = new TreeSet<>();
    for (Replica r : replicas) {
      names.addAll(r.models().keySet());
    }
    List<Object> data = new ArrayList<>();
    for (String name : names) {
      Map<String, Object> card = new LinkedHashMap<>();
      card.put("id", name);
      card.put("object", "model");
      card.put("created", createdEpochSeconds);
      card.put("owned_by", "vllm");
      card.put("root", name);
      data.add(card);
    }
    Map<String, Object> list = new LinkedHashMap<>();
    list.put("object", "list");
    list.put("data", data);
    return Json.write(list).getBytes(StandardCharsets.UTF_8);
  }
}
