package dev.iobound.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The /hash corpus the harness generated: {@code $IOBOUND_CORPUS_DIR/<id>.bin} for ids below {@code
 * $IOBOUND_CORPUS_FILES}. File names are built from a parsed id, never from input.
 */
public final class Corpus {
  private final Path dir;
  private final int files;

  public Corpus(Path dir, int files) {
    this.dir = dir;
    this.files = files;
  }

  /** The corpus named by the environment; an empty one when the harness gave none. */
  public static Corpus fromEnvironment() {
    String dir = System.getenv("IOBOUND_CORPUS_DIR");
    String files = System.getenv("IOBOUND_CORPUS_FILES");
    if (dir == null || files == null) {
      return new Corpus(Path.of("."), 0);
    }
    return new Corpus(Path.of(dir), Integer.parseInt(files));
  }

  public int files() {
    return files;
  }

  /** The file of an id already checked by {@link Contract#hashId}. */
  public Path file(int id) {
    return dir.resolve(id + ".bin");
  }

  /** Reads file {@code id} (blocking) and returns the SHA-512 of its bytes. */
  public String hash(int id) throws IOException {
    return sha512Hex(Files.readAllBytes(file(id)));
  }

  public static String sha512Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-512").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-512", e);
    }
  }
}
