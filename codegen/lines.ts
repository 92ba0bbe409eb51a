/** A tiny line builder with indentation (docs/ARCHITECTURE.md, Kernels): no template engine. */
export class Lines {
  private readonly out: string[] = [];
  private depth = 0;

  line(s: string): this {
    this.out.push("  ".repeat(this.depth) + s);
    return this;
  }

  open(s: string): this {
    this.line(s);
    this.depth++;
    return this;
  }

  close(s = "}"): this {
    this.depth--;
    return this.line(s);
  }

  /** A line between two indented blocks (`} else {`). */
  between(s: string): this {
    this.depth--;
    this.line(s);
    this.depth++;
    return this;
  }

  toString(): string {
    return this.out.join("\n");
  }
}
