package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ContractTest {
  @Test
  void acceptsTheWholeRange() {
    assertEquals(0, Contract.delayMs("0"));
    assertEquals(100, Contract.delayMs("100"));
    assertEquals(60_000, Contract.delayMs("60000"));
    assertEquals(7, Contract.delayMs("007"));
  }

  @Test
  void rejectsEverythingElse() {
    for (String bad :
        new String[] {
          null, "", "-1", "+5", "1.5", "abc", "60001", "99999999999999999999", " 5", "５", "1e3"
        }) {
      BadRequest e =
          assertThrows(BadRequest.class, () -> Contract.delayMs(bad), String.valueOf(bad));
      assertEquals(true, e.getMessage().contains("ms"), e.getMessage());
    }
  }

  @Test
  void messageInputsFollowTheContract() {
    assertEquals(20, Contract.messageLimit(null));
    assertEquals(1, Contract.messageLimit("1"));
    assertEquals(100, Contract.messageLimit("100"));
    for (String bad : new String[] {"", "0", "101", "-1", "ten", "1.0"}) {
      assertThrows(BadRequest.class, () -> Contract.messageLimit(bad), bad);
    }
    assertEquals(1L, Contract.messageId("1"));
    assertEquals(Long.MAX_VALUE, Contract.messageId("9223372036854775807"));
    for (String bad :
        new String[] {
          null, "", "0", "-1", "abc", "1.5", "9223372036854775808", "99999999999999999999", "1 "
        }) {
      assertThrows(BadRequest.class, () -> Contract.messageId(bad), String.valueOf(bad));
    }
    assertEquals("hi", Contract.messageText("hi"));
    String thousandEmoji = "\uD83D\uDE00".repeat(1000); // 1,000 characters, 2,000 UTF-16 units
    assertEquals(thousandEmoji, Contract.messageText(thousandEmoji));
    for (Object bad :
        new Object[] {null, "", "a".repeat(1001), 42, java.util.List.of("x"), "a\0b"}) {
      assertThrows(BadRequest.class, () -> Contract.messageText(bad), String.valueOf(bad));
    }
    assertEquals(
        "UPDATE messages SET text = ? WHERE id = ? RETURNING id, text",
        Database.jdbc(Database.UPDATE));
  }

  @Test
  void aggregateKeysFollowTheContract() {
    assertEquals(java.util.List.of("a"), Contract.aggregateKeys("a"));
    assertEquals(java.util.List.of("w50-a", "b_2"), Contract.aggregateKeys("w50-a,b_2"));
    assertEquals(16, Contract.aggregateKeys("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p").size());
    for (String bad :
        new String[] {
          null, "", ",", "a,", ",a", "a,,b", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "a,../x"
        }) {
      assertThrows(BadRequest.class, () -> Contract.aggregateKeys(bad), String.valueOf(bad));
    }
  }
}
