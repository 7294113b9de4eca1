package dev.iobound.common;

/**
 * Where the harness's PostgreSQL is (IOBOUND_DB_*) and how many connections a contender's pool may
 * hold. Every contender gets the same pool size, so the pool is not what differs.
 */
public record Database(String host, int port, String name, String user, String password, int pool) {
  public static Database fromEnvironment() {
    return new Database(
        env("IOBOUND_DB_HOST", "127.0.0.1"),
        Integer.parseInt(env("IOBOUND_DB_PORT", "5432")),
        env("IOBOUND_DB_NAME", "iobound"),
        env("IOBOUND_DB_USER", "iobound"),
        env("IOBOUND_DB_PASSWORD", ""),
        Integer.parseInt(env("IOBOUND_DB_POOL", "10")));
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? fallback : v;
  }

  public String jdbcUrl() {
    return "jdbc:postgresql://" + host + ":" + port + "/" + name;
  }

  /** The statements every contender runs, word for word. */
  public static final String LIST = "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1";

  public static final String GET = "SELECT id, text FROM messages WHERE id = $1";
  public static final String CREATE = "INSERT INTO messages (text) VALUES ($1) RETURNING id, text";
  public static final String UPDATE =
      "UPDATE messages SET text = $1 WHERE id = $2 RETURNING id, text";
  public static final String DELETE = "DELETE FROM messages WHERE id = $1";

  /**
   * A statement with JDBC's ? placeholders instead of PostgreSQL's $n (every statement numbers its
   * parameters in order).
   */
  public static String jdbc(String sql) {
    return sql.replaceAll("\\$[0-9]+", "?");
  }
}
