package dev.iobound.common;

/** `--name=value` or `--name value` command-line options for the plain (non-Spring) contenders. */
public final class Args {
  private final String[] args;

  public Args(String[] args) {
    this.args = args.clone();
  }

  public String get(String name, String fallback) {
    String flag = "--" + name;
    for (int i = 0; i < args.length; i++) {
      if (args[i].startsWith(flag + "=")) {
        return args[i].substring(flag.length() + 1);
      }
      if (args[i].equals(flag) && i + 1 < args.length) {
        return args[i + 1];
      }
    }
    return fallback;
  }

  /**
   * The address to listen on: --address, which iobound sets to the contender host's address, or
   * loopback when run by hand.
   */
  public String address() {
    return get("address", "127.0.0.1");
  }

  public int getInt(String name, int fallback) {
    String v = get(name, null);
    if (v == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be an integer, got " + v, e);
    }
  }
}
