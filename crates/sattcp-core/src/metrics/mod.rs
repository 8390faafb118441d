pub mod fairness;
