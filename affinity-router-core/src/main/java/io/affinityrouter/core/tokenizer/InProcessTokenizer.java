package io.affinityrouter.core.tokenizer;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.Tokenizer;
import io.affinityrouter.spi.TokenizerException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Tokenizer} that computes in process what vLLM's {@code POST /tokenize} answers: the
 * model's chat template rendered as {@code transformers}' {@code apply_chat_template} renders it,
 * then encoded by HuggingFace's own tokenizer (the Rust {@code tokenizers} library, through DJL)
 * from the model's {@code tokenizer.json}. No network call, no engine load: a chat of a few
 * thousand tokens takes tens of microseconds (see {@code jmh/}).
 *
 * <p>Each model is a directory as the HuggingFace Hub ships it: {@code tokenizer.json}, and
 * {@code tokenizer_config.json} with the {@code chat_template} (or a {@code chat_template.jinja}
 * beside it, which then wins, as in {@code transformers}) and the special tokens the template
 * reads ({@code bos_token}, {@code eos_token}, ...). The template is rendered with
 * {@code messages}, {@code add_generation_prompt}, {@code tools} and {@code documents} (both
 * {@code None}), and those special tokens; {@code continueFinalMessage} cuts the rendering after
 * the last message's text, as {@code transformers} does.
 *
 * <p>{@link #tokenize} works on the caller's thread and returns a completed future: an unknown
 * model, or a template that rejects the conversation ({@code raise_exception}), completes it
 * exceptionally with {@link TokenizerException}, which names neither the text nor the template's
 * message arguments beyond what the template wrote. Thread-safe. {@link #close} frees the native
 * tokenizers.
 *
 * <p>Needs {@code ai.djl.huggingface:tokenizers} and {@code com.fasterxml.jackson.core:jackson-core}
 * on the class path (optional dependencies of the core). DJL loads its native library from its
 * jar, offline, into its cache directory ({@code DJL_CACHE_DIR}, by default {@code ~/.djl.ai}).
 */
public final class InProcessTokenizer implements Tokenizer {
  private static final List<String> SPECIAL_TOKENS = List.of("bos_token", "eos_token",
      "unk_token", "sep_token", "pad_token", "cls_token", "mask_token");
  private static final String CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG ";

  private final Map<String, Model> models;
  // Calls share it; close() takes it alone, so native memory is never freed under an encode.
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private boolean closed; // guarded by lifecycle

  private InProcessTokenizer(Map<String, Model> models) {
    this.models = models;
  }

  /** A builder with no models. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public CompletableFuture<int[]> tokenize(TokenizeRequest request) {
    Objects.requireNonNull(request, "request");
    try {
      return CompletableFuture.completedFuture(ids(request));
    } catch (TokenizerException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The ids of {@code request}; throws {@link TokenizerException} when it cannot be tokenized. */
  int[] ids(TokenizeRequest request) {
    lifecycle.readLock().lock();
    try {
      if (closed) {
        throw new TokenizerException("closed");
      }
      return idsOpen(request);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private int[] idsOpen(TokenizeRequest request) {
    Model model = models.get(request.model());
    if (model == null) {
      throw new TokenizerException("model: " + request.model() + " (expected: one of "
          + new TreeSet<>(models.keySet()) + ")");
    }
    String text = request.isChat() ? model.render(request)
        : Objects.requireNonNull(request.prompt(), "prompt"); // a request is a chat or a prompt
    return encode(model, text, request.addSpecialTokens());
  }

  private static int[] encode(Model model, String text, boolean addSpecialTokens) {
    long[] ids;
    try {
      // the ids alone: Encoding would also copy tokens, offsets and masks out of native memory
      long encoding = TokenizersLibrary.LIB.encode(model.tokenizer.getHandle(), text,
          addSpecialTokens);
      try {
        ids = TokenizersLibrary.LIB.getTokenIds(encoding);
      } finally {
        TokenizersLibrary.LIB.deleteEncoding(encoding);
      }
    } catch (RuntimeException e) {
      throw new TokenizerException("model " + model.name + ": the tokenizer failed ("
          + e.getClass().getSimpleName() + ")", e);
    }
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = (int) ids[i];
    }
    return out;
  }

  // For InProcessTokenizerBenchmark, which times the two halves of ids() apart.
  String renderForBenchmark(TokenizeRequest request) {
    return known(request.model()).render(request);
  }

  @Nullable ChatTemplate templateForBenchmark(String model) {
    return known(model).template;
  }

  int[] encodeForBenchmark(String model, String text) {
    lifecycle.readLock().lock();
    try {
      return encode(known(model), text, false);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private Model known(String model) {
    return Objects.requireNonNull(models.get(model), "model"); // the benchmark names its model
  }

  /** The models this tokenizer knows, by name. */
  public List<String> models() {
    return List.copyOf(new TreeSet<>(models.keySet()));
  }

  /** Frees the native tokenizers once calls in progress return; later calls fail. Idempotent. */
  @Override
  public void close() {
    lifecycle.writeLock().lock();
    try {
      if (!closed) {
        closed = true;
        models.values().forEach(m -> m.tokenizer.close());
      }
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return "InProcessTokenizer" + models();
  }

  private static final class Model {
    final String name;
    final HuggingFaceTokenizer tokenizer;
    final @Nullable ChatTemplate template;
    final boolean templateNamesContent;
    final Map<String, Object> specialTokens;

    Model(String name, HuggingFaceTokenizer tokenizer, @Nullable String template,
        Map<String, Object> specialTokens) {
      this.name = name;
      this.tokenizer = tokenizer;
      this.template = template == null ? null : ChatTemplate.parse(template);
      // transformers refuses to continue a final message if the template never reads content
      this.templateNamesContent = template != null && template.contains("content");
      this.specialTokens = specialTokens;
    }

    String render(TokenizeRequest request) {
      if (template == null) {
        throw new TokenizerException("model " + name + ": no chat template");
      }
      // only a chat renders, and a chat has messages
      List<ChatMessage> messages = Objects.requireNonNull(request.messages(), "messages");
      List<Object> chat = new ArrayList<>(messages.size());
      for (int i = 0; i < messages.size(); i++) {
        ChatMessage m = messages.get(i);
        Map<String, Object> message = new LinkedHashMap<>(4);
        message.put("role", m.role());
        boolean last = i == messages.size() - 1;
        message.put("content", last && request.continueFinalMessage()
            ? m.content() + CONTINUE_TAG : m.content());
        chat.add(message);
      }
      if (request.continueFinalMessage() && !templateNamesContent) {
        throw new TokenizerException("model " + name + ": continueFinalMessage, but the chat "
            + "template does not read a message's content");
      }
      Map<String, Object> context = new HashMap<>(specialTokens);
      context.put("messages", chat);
      context.put("tools", null);
      context.put("documents", null);
      context.put("add_generation_prompt", request.addGenerationPrompt());
      String rendered;
      try {
        rendered = template.render(context);
      } catch (TemplateException e) {
        throw new TokenizerException("model " + name + ": " + e.getMessage());
      }
      if (!request.continueFinalMessage()) {
        return rendered;
      }
      String finalText =
          PyStrings.strip(messages.get(messages.size() - 1).content(), null, true, true);
      int at = rendered.lastIndexOf(CONTINUE_TAG.strip());
      if (at < 0 || !rendered.contains(finalText)) {
        throw new TokenizerException("model " + name + ": continueFinalMessage, but the chat "
            + "template dropped part of the final message");
      }
      return rendered.startsWith(CONTINUE_TAG, at) ? rendered.substring(0, at)
          : PyStrings.strip(rendered.substring(0, at), null, false, true);
    }
  }

  /** Builds an {@link InProcessTokenizer}; not thread-safe. */
  public static final class Builder {
    private final Map<String, Path> directories = new LinkedHashMap<>();
    private final Map<String, String> templates = new HashMap<>();

    private Builder() {}

    /**
     * Serves {@code model} from {@code directory}, which holds its {@code tokenizer.json} and
     * {@code tokenizer_config.json}.
     */
    public Builder model(String model, Path directory) {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(directory, "directory");
      if (model.isBlank()) {
        throw new IllegalArgumentException("model: blank (expected: a model name)");
      }
      if (directories.containsKey(model)) {
        throw new IllegalArgumentException("model: " + model + " given twice");
      }
      directories.put(model, directory);
      return this;
    }

    /** Renders {@code model}'s chats with {@code template} instead of the one its files name. */
    public Builder chatTemplate(String model, String template) {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(template, "template");
      parseTemplate(model, template);
      templates.put(model, template);
      return this;
    }

    /**
     * Loads every model's tokenizer and parses its chat template.
     *
     * @throws IllegalArgumentException a model's files are missing or malformed, or its chat
     *     template uses what the renderer does not support (then no native memory is kept)
     * @throws UncheckedIOException a file cannot be read
     */
    public InProcessTokenizer build() {
      if (directories.isEmpty()) {
        throw new IllegalArgumentException("models: none (expected: at least one)");
      }
      for (String model : templates.keySet()) {
        if (!directories.containsKey(model)) {
          throw new IllegalArgumentException(
              "chatTemplate: model " + model + " has no directory (expected: one of "
                  + directories.keySet() + ")");
        }
      }
      Map<String, Model> models = new HashMap<>();
      try {
        for (Map.Entry<String, Path> e : directories.entrySet()) {
          models.put(e.getKey(), load(e.getKey(), e.getValue(), templates.get(e.getKey())));
        }
      } catch (RuntimeException e) {
        models.values().forEach(m -> m.tokenizer.close());
        throw e;
      }
      return new InProcessTokenizer(Map.copyOf(models));
    }

    private static Model load(String name, Path dir, @Nullable String templateOverride) {
      Path tokenizerJson = dir.resolve("tokenizer.json");
      if (!Files.isRegularFile(tokenizerJson)) {
        throw new IllegalArgumentException("model " + name + ": " + tokenizerJson
            + " is not a file (expected: the model's tokenizer.json)");
      }
      Map<String, Object> config = readConfig(name, dir.resolve("tokenizer_config.json"));
      String template = templateOverride != null ? templateOverride : template(name, dir, config);
      Map<String, Object> special = new HashMap<>();
      for (String key : SPECIAL_TOKENS) {
        Object v = config.get(key);
        if (v instanceof Map<?, ?> added) {
          v = added.get("content");
        }
        if (v instanceof String s) {
          special.put(key, s);
        }
      }
      if (template != null) {
        parseTemplate(name, template);
      }
      HuggingFaceTokenizer tokenizer;
      try {
        tokenizer = HuggingFaceTokenizer.builder()
            .optTokenizerPath(tokenizerJson)
            .optTruncation(false)
            .optPadding(false)
            .build();
      } catch (IOException e) {
        throw new UncheckedIOException("model " + name + ": " + tokenizerJson, e);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("model " + name + ": " + tokenizerJson
            + " is not a tokenizer (" + e.getMessage() + ")", e);
      }
      try {
        return new Model(name, tokenizer, template, Map.copyOf(special));
      } catch (RuntimeException e) {
        tokenizer.close();
        throw e;
      }
    }

    private static void parseTemplate(String model, String template) {
      try {
        ChatTemplate.parse(template);
      } catch (TemplateException e) {
        throw new IllegalArgumentException("model " + model + ": chat template: " + e.getMessage(),
            e);
      }
    }

    private static @Nullable String template(String name, Path dir, Map<String, Object> config) {
      Path jinja = dir.resolve("chat_template.jinja");
      if (Files.isRegularFile(jinja)) {
        try {
          return Files.readString(jinja);
        } catch (IOException e) {
          throw new UncheckedIOException("model " + name + ": " + jinja, e);
        }
      }
      Object t = config.get("chat_template");
      if (t instanceof String s) {
        return s;
      }
      if (t instanceof List<?> named) {
        for (Object o : named) {
          if (o instanceof Map<?, ?> m && "default".equals(m.get("name"))
              && m.get("template") instanceof String s) {
            return s;
          }
        }
        throw new IllegalArgumentException("model " + name
            + ": chat_template is a list without a \"default\" template");
      }
      return null;
    }

    private static Map<String, Object> readConfig(String name, Path file) {
      if (!Files.isRegularFile(file)) {
        return Map.of();
      }
      try (JsonParser p = new JsonFactory().createParser(file.toFile())) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          throw new IllegalArgumentException(
              "model " + name + ": " + file + " is not a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> config =
            (Map<String, Object>) Objects.requireNonNull(JsonValues.read(p), "config"); // an object
        return config;
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "model " + name + ": " + file + " is not JSON (" + e.getMessage() + ")", e);
      }
    }
  }
}
