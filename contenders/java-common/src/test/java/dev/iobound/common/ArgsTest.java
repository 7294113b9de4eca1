package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ArgsTest {
  @Test
  void readsBothForms() {
    Args a = new Args(new String[] {"--port=8080", "--threads", "500", "--virtual=true"});
    assertEquals(8080, a.getInt("port", 1));
    assertEquals(500, a.getInt("threads", 1));
    assertEquals("true", a.get("virtual", "false"));
    assertEquals(7, a.getInt("missing", 7));
  }

  @Test
  void namesTheBadOption() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new Args(new String[] {"--port=x"}).getInt("port", 1));
    assertEquals("--port must be an integer, got x", e.getMessage());
  }
}
