"""The PostgreSQL (with pgvector) store: one database shared by any number of replicas."""
