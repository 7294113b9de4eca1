package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HashAndEnrichTest {
  @Test
  void hashIdsStayInsideTheCorpus() {
    assertEquals(0, Contract.hashId("0", 10));
    assertEquals(9, Contract.hashId("9", 10));
    for (String bad :
        new String[] {
          null,
          "",
          "10",
          "-1",
          "abc",
          "1.bin",
          "../../etc/passwd",
          "%2e%2e",
          "99999999999999999999",
          " 1"
        }) {
      assertThrows(BadRequest.class, () -> Contract.hashId(bad, 10), String.valueOf(bad));
    }
    assertEquals(0, Contract.hashDelayMs(null));
    assertEquals(300, Contract.hashDelayMs("300"));
    assertThrows(BadRequest.class, () -> Contract.hashDelayMs("60001"));
    assertThrows(BadRequest.class, () -> Contract.hashDelayMs(""));
  }

  @Test
  void hashIsTheSha512OfTheFile(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("3.bin"), "abc", StandardCharsets.US_ASCII);
    String h = new Corpus(dir, 4).hash(3);
    // FIPS 180-2 example: SHA-512("abc").
    assertEquals(
        true, h.startsWith("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"), h);
    assertEquals(128, h.length());
  }

  @Test
  void enrichKeysAreChecked() {
    assertEquals("fast-abc_1", Contract.enrichKey("fast-abc_1"));
    assertEquals("k".repeat(64), Contract.enrichKey("k".repeat(64)));
    for (String bad :
        new String[] {null, "", "k".repeat(65), "a b", "../admin", "été", "a/b", "a?b"}) {
      assertThrows(BadRequest.class, () -> Contract.enrichKey(bad), String.valueOf(bad));
    }
    assertEquals("k=v", Downstream.enriched("k", "v"));
  }
}
