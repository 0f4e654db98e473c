DROP TABLE standards;
