package dev.iobound.common;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * The HikariCP pool of the contenders that call JDBC themselves (Jetty, Helidon), set up once:
 * Spring Boot and Quarkus configure their own from properties. HikariCP is an optional dependency
 * here, so only a contender that declares it gets it.
 */
public final class JdbcPool {
  private JdbcPool() {}

  /**
   * A pool of {@code db.pool()} connections to the harness's database. It connects on first use, as
   * Spring Boot's HikariCP does, so the server starts (and answers everything but /messages)
   * without a database.
   */
  public static HikariDataSource of(Database db) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(db.jdbcUrl());
    c.setUsername(db.user());
    c.setPassword(db.password());
    c.setMaximumPoolSize(db.pool());
    c.setPoolName("messages");
    c.setInitializationFailTimeout(-1);
    return new HikariDataSource(c);
  }
}
