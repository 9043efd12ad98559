//! Compile-time behaviour of the derives: what compiles, and the exact
//! error messages of what does not.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
