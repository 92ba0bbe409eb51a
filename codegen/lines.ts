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

  /**
   * `head` (an `if (…) {` line) with `then`'s lines indented under it, then `} else {`
   * and `otherwise`'s lines when it is given, then `}`.
   */
  branch(head: string, then: () => void, otherwise?: () => void): this {
    this.open(head);
    then();
    if (otherwise !== undefined) {
      this.depth--;
      this.line("} else {");
      this.depth++;
      otherwise();
    }
    return this.close();
  }

  toString(): string {
    return this.out.join("\n");
  }
}
