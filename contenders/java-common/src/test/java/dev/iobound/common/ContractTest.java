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
        for (String bad : new String[] {null, "", "-1", "+5", "1.5", "abc", "60001", "99999999999999999999", " 5", "５", "1e3"}) {
            BadRequest e = assertThrows(BadRequest.class, () -> Contract.delayMs(bad), String.valueOf(bad));
            assertEquals(true, e.getMessage().contains("ms"), e.getMessage());
        }
    }
}
