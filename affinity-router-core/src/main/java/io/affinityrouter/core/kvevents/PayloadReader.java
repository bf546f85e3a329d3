package io.affinityrouter.core.kvevents;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;
import org.msgpack.value.ValueType;

/**
 * Reads the msgpack values of one payload with msgpack-java, reusing its buffers between payloads:
 * strings are read into one byte buffer and compared as bytes, hashes are read as 64-bit values
 * (unsigned 64-bit integers keep their bits, bytes give their last 8 bytes big-endian), and lengths
 * are checked against what the payload can hold before anything is allocated for them. Not
 * thread-safe.
 */
final class PayloadReader {
  /** {@link #intField()} for a value that is not an integer (it was skipped). */
  static final int NOT_AN_INTEGER = -2;

  private final ArrayBufferInput input = new ArrayBufferInput(new byte[0]);
  private final MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(input);
  private byte[] payload = new byte[0];
  private int offset;
  private int end;
  private byte[] text = new byte[64];
  private int textLength;
  private long hash;

  void reset(byte[] batch, int from, int length) throws IOException {
    payload = batch;
    offset = from;
    end = from + length;
    input.reset(batch, from, length);
    unpacker.reset(input);
  }

  ValueType nextType() throws IOException {
    return unpacker.getNextFormat().getValueType();
  }

  /** An array header whose length the rest of the payload can hold (at least a byte each). */
  int arrayHeader() throws IOException {
    int n = unpacker.unpackArrayHeader();
    checkRemaining(n);
    return n;
  }

  int mapHeader() throws IOException {
    int n = unpacker.unpackMapHeader();
    checkRemaining(n);
    return n;
  }

  void skip() throws IOException {
    unpacker.skipValue();
  }

  void skip(int values) throws IOException {
    unpacker.skipValue(values);
  }

  boolean tryNil() throws IOException {
    return unpacker.tryUnpackNil();
  }

  int readInt() throws IOException {
    return unpacker.unpackInt();
  }

  /** An integer field: its value, -1 for nil, or {@link #NOT_AN_INTEGER} (skipped). */
  int intField() throws IOException {
    if (unpacker.tryUnpackNil()) {
      return -1;
    }
    if (nextType() != ValueType.INTEGER) {
      unpacker.skipValue();
      return NOT_AN_INTEGER;
    }
    return unpacker.unpackInt();
  }

  /** Reads a string into the text buffer. */
  void readText() throws IOException {
    readPayload(unpacker.unpackRawStringHeader());
  }

  boolean textIs(byte[] expected) {
    return Arrays.equals(text, 0, textLength, expected, 0, expected.length);
  }

  boolean textIgnoringCaseIs(byte[] lowerCase) {
    if (textLength != lowerCase.length) {
      return false;
    }
    for (int i = 0; i < textLength; i++) {
      int c = text[i];
      if (c >= 'A' && c <= 'Z') {
        c += 'a' - 'A';
      }
      if (c != lowerCase[i]) {
        return false;
      }
    }
    return true;
  }

  /** The text last read (valid until the next read); {@link #textLength()} bytes. */
  byte[] text() {
    return text;
  }

  int textLength() {
    return textLength;
  }

  /** Reads one block hash into {@link #hash()}; false (value skipped) if it is no hash. */
  boolean readHash() throws IOException {
    MessageFormat format = unpacker.getNextFormat();
    switch (format.getValueType()) {
      case INTEGER -> {
        if (format == MessageFormat.UINT64) {
          // unpackLong refuses values above 2^63 - 1; read the eight bytes after the marker
          int at = offset + (int) unpacker.getTotalReadBytes() + 1;
          hash = bigEndian(payload, at, 8, end);
          unpacker.skipValue();
        } else {
          hash = unpacker.unpackLong();
        }
        return true;
      }
      case BINARY -> {
        int n = unpacker.unpackBinaryHeader();
        readPayload(n);
        int take = Math.min(n, 8);
        hash = bigEndian(text, n - take, take, n);
        return true;
      }
      default -> {
        unpacker.skipValue();
        return false;
      }
    }
  }

  long hash() {
    return hash;
  }

  private void readPayload(int n) throws IOException {
    checkRemaining(n);
    if (text.length < n) {
      text = new byte[Math.max(n, text.length * 2)];
    }
    unpacker.readPayload(text, 0, n);
    textLength = n;
  }

  private void checkRemaining(int n) throws IOException {
    long remaining = end - offset - unpacker.getTotalReadBytes();
    if (n < 0 || n > remaining) {
      throw new IOException("length " + n + " past the end of the payload");
    }
  }

  private static long bigEndian(byte[] bytes, int from, int length, int limit)
      throws IOException {
    if (from < 0 || from + length > limit) {
      throw new IOException("payload ends inside a hash");
    }
    long v = 0;
    for (int i = 0; i < length; i++) {
      v = (v << 8) | (bytes[from + i] & 0xFF);
    }
    return v;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
