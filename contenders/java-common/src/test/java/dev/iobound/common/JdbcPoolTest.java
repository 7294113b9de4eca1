package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

class JdbcPoolTest {
  @Test
  void holdsThePlansPoolSizeAndStartsWithoutADatabase() {
    // Port 9 on loopback: nothing listens there, and the pool must still be made.
    Database db = new Database("127.0.0.1", 9, "iobound", "iobound", "secret", 7);
    try (HikariDataSource pool = JdbcPool.of(db)) {
      assertEquals(7, pool.getMaximumPoolSize());
      assertEquals("jdbc:postgresql://127.0.0.1:9/iobound", pool.getJdbcUrl());
      assertEquals("iobound", pool.getUsername());
      assertEquals("messages", pool.getPoolName());
    }
  }
}
