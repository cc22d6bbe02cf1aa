package io.github.turnstilelocks.client.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the conformance suite's scenario files (the client has no JSON library, and
 * the test classpath needs none): objects become {@link LinkedHashMap}s in file order (a step's first
 * key is its operation), arrays {@link List}s, numbers {@link Long} or {@link Double}, plus String,
 * Boolean and null. Fails naming the offset of what it cannot read.
 */
public final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /** Parses one JSON document. */
  public static Object parse(String text) {
    Json json = new Json(text);
    Object value = json.value();
    json.space();
    if (json.at != text.length()) throw json.error("trailing text");
    return value;
  }

  private Object value() {
    space();
    if (at >= text.length()) throw error("unexpected end");
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> map = new LinkedHashMap<>();
    at++;
    space();
    if (take('}')) return map;
    do {
      space();
      String key = string();
      space();
      expect(':');
      map.put(key, value());
      space();
    } while (take(','));
    expect('}');
    return map;
  }

  private List<Object> array() {
    List<Object> list = new ArrayList<>();
    at++;
    space();
    if (take(']')) return list;
    do {
      list.add(value());
      space();
    } while (take(','));
    expect(']');
    return list;
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      if (at >= text.length()) throw error("unterminated string");
      char c = text.charAt(at++);
      if (c == '"') return out.toString();
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = text.charAt(at++);
      switch (e) {
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> out.append(e);
      }
    }
  }

  private Object number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
    String n = text.substring(start, at);
    if (n.isEmpty()) throw error("unexpected character");
    return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.valueOf(n) : (Object) Long.valueOf(n);
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) throw error("unexpected word");
    at += word.length();
    return value;
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
  }

  private boolean take(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!take(c)) throw error("expected '" + c + "'");
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("JSON: " + what + " at offset " + at);
  }
}
