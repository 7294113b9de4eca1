package dev.iobound.common;

import java.util.List;

/**
 * Input rules of the iobound contract (contract/README.md), shared by every Java contender so that
 * they differ only in how they wait, never in what they accept.
 */
public final class Contract {
  public static final String PLAINTEXT = "Hello, World!";

  /** Upper bound for /delay: long enough for every plan, short enough to stop abuse. */
  public static final long MAX_DELAY_MS = 60_000;

  private Contract() {}

  /** Parses the {@code ms} query parameter of /delay: a decimal integer in 0..60000. */
  public static long delayMs(String raw) {
    if (raw == null || raw.isEmpty()) {
      throw new BadRequest("query parameter ms is required, e.g. /delay?ms=100");
    }
    return decimal(raw, "ms", MAX_DELAY_MS);
  }

  /** The optional {@code delayMs} of /hash: absent means 0, otherwise as /delay's ms. */
  public static long hashDelayMs(String raw) {
    return raw == null ? 0 : decimal(raw, "delayMs", MAX_DELAY_MS);
  }

  /** The {@code id} of /hash: a decimal integer naming a corpus file, 0..files-1. */
  public static int hashId(String raw, int files) {
    if (raw == null || raw.isEmpty()) {
      throw new BadRequest("query parameter id is required, e.g. /hash?id=42");
    }
    return (int) decimal(raw, "id", files - 1L);
  }

  /** The {@code key} of /enrich: 1..64 characters of A-Z a-z 0-9 - _. */
  public static String enrichKey(String raw) {
    String rule = "key must be 1..64 characters of A-Z a-z 0-9 - _";
    if (raw == null || raw.isEmpty() || raw.length() > 64) {
      throw new BadRequest(rule);
    }
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '-'
              || c == '_';
      if (!ok) {
        throw new BadRequest(rule);
      }
    }
    return raw;
  }

  /** The most keys one /aggregate may name. */
  public static final int MAX_AGGREGATE_KEYS = 16;

  /** The {@code keys} of /aggregate: 1..16 comma-separated keys, each as for /enrich. */
  public static List<String> aggregateKeys(String raw) {
    String rule = "keys must be 1 to " + MAX_AGGREGATE_KEYS + " comma-separated keys";
    if (raw == null) {
      throw new BadRequest(rule + ", e.g. /aggregate?keys=a,b");
    }
    // -1 keeps empty keys ("a,,b", "a,") so that they are refused, not dropped.
    List<String> keys = List.of(raw.split(",", -1));
    if (keys.size() > MAX_AGGREGATE_KEYS) {
      throw new BadRequest(rule);
    }
    keys.forEach(Contract::enrichKey);
    return keys;
  }

  /** Rows a list returns when no limit is given, and the most it may ask for. */
  public static final int DEFAULT_LIMIT = 20;

  public static final int MAX_LIMIT = 100;

  /** Longest message text, in characters (Unicode code points). */
  public static final int MAX_TEXT = 1000;

  /** Largest request body a contender reads; beyond it: 413 (or 400). */
  public static final int MAX_BODY_BYTES = 64 * 1024;

  /** The {@code limit} of GET /messages: absent means 20, otherwise 1..100. */
  public static int messageLimit(String raw) {
    if (raw == null) {
      return DEFAULT_LIMIT;
    }
    long limit = decimal(raw, "limit", MAX_LIMIT);
    if (limit < 1) {
      throw new BadRequest("limit must be an integer between 1 and " + MAX_LIMIT);
    }
    return (int) limit;
  }

  /** The id in /messages/{id}: 1..19 decimal digits, at least 1, within 64 bits. */
  public static long messageId(String raw) {
    String rule = "id must be a positive integer";
    if (raw == null || raw.isEmpty() || raw.length() > 19) {
      throw new BadRequest(rule);
    }
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c < '0' || c > '9') {
        throw new BadRequest(rule);
      }
    }
    try {
      long id = Long.parseLong(raw);
      if (id < 1) {
        throw new BadRequest(rule);
      }
      return id;
    } catch (NumberFormatException e) {
      throw new BadRequest(rule);
    }
  }

  /**
   * The {@code text} field of a parsed create/update body (whatever the framework's JSON parser
   * made of it): a string of 1..1000 characters.
   */
  public static String messageText(Object text) {
    // U+0000 cannot be stored in PostgreSQL text: refused like any other invalid text.
    if (!(text instanceof String s)
        || s.isEmpty()
        || s.codePointCount(0, s.length()) > MAX_TEXT
        || s.indexOf('\0') >= 0) {
      throw new BadRequest(
          "body must be a JSON object with \"text\": a string of 1.." + MAX_TEXT + " characters");
    }
    return s;
  }

  private static long decimal(String raw, String name, long max) {
    String rule = name + " must be an integer between 0 and " + max;
    if (raw.isEmpty() || raw.length() > 10) {
      throw new BadRequest(rule);
    }
    long value = 0;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c < '0' || c > '9') {
        throw new BadRequest(rule);
      }
      value = value * 10 + (c - '0');
    }
    if (value > max) {
      throw new BadRequest(rule);
    }
    return value;
  }
}
