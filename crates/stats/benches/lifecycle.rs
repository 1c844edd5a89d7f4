use criterion::{Criterion, criterion_group, criterion_main};
fn b(_c: &mut Criterion) {}
criterion_group!(g, b);
criterion_main!(g);
