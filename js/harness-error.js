// Hand-written: the base of every error the package raises. The classes themselves are
// generated from the Rust list of error classes (generated/errors.js).

/** Base of every error `createAgent` and its agent raise: `name` and `code` are the class name. */
export class HarnessError extends Error {
  constructor(message, code) {
    super(message)
    this.name = code ?? new.target.name
    this.code = code ?? new.target.name
  }
}
