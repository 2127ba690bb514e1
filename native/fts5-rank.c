/*
 * agentos_bm25(fts_table, counts): FTS5's bm25() with the number of documents holding each phrase
 * given by the caller, instead of counted over the whole table by every statement that ranks.
 *
 * Why: bm25() reads each query phrase's whole posting list once per statement to count its documents.
 * An agent's memory is a small rowid range of one table shared by every agent, so with 10 000 agents
 * that count cost about 100 times the search it served. The text index keeps the counts (counted once,
 * recounted as the table changes) and passes them here, comma-separated, one per phrase of the MATCH
 * in order. With the counts bm25() would make, the relevance is bm25()'s (same formula, same order of
 * operations; it may differ in the last bit with the compiler), but positive: higher is better.
 *
 * agentos_bm25(fts_table, counts, scored): only the first `scored` phrases weigh (counts holds that
 * many). The phrases after them are a filter the caller ANDs onto the query — `(a OR b OR c) AND (b)`
 * ranks the matches holding b by a, b and c — so FTS5 walks the rare phrase's postings and seeks the
 * others, instead of walking every posting of a common phrase to test each against a list.
 *
 * agentos_bm25(fts_table, counts, scored, floor): NULL for a row whose relevance is surely below
 * `floor` (> 0), told before its length is read: the length is a lookup in the docsize table, about
 * two thirds of a row's cost, and a row's relevance is at most what it would be at length 1. The
 * caller passes the relevance a row needs to enter its result, and only rows that may get there are
 * weighed in full.
 *
 * Built by `npm install` (scripts/build-native.mjs) into dist/native; loaded by the SQLite connection
 * (src/engine/state/sqlite-connection.ts). Without it the index ranks with bm25() itself.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

/* What a statement computes once: the average document length and each phrase's idf. */
typedef struct {
  int phrases;
  double averageLength;
  double *idf;
  double *frequency;
} Bm25Data;

static void freeBm25Data(void *data) { sqlite3_free(data); }

/* Reads the counts once per statement (kept as FTS5 auxiliary data). SQLITE_MISMATCH: bad counts. */
static int bm25Data(const Fts5ExtensionApi *api, Fts5Context *fts, const char *counts, int scored,
                     Bm25Data **out) {
  Bm25Data *data = (Bm25Data *)api->xGetAuxdata(fts, 0);
  if (data) {
    *out = data;
    return SQLITE_OK;
  }
  int phrases = api->xPhraseCount(fts);
  if (scored >= 0) {
    if (scored < 1 || scored > phrases) return SQLITE_MISMATCH;
    phrases = scored;
  }
  sqlite3_int64 rows = 0, tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) return rc;
  data = sqlite3_malloc64(sizeof(Bm25Data) + sizeof(double) * phrases * 2);
  if (!data) return SQLITE_NOMEM;
  data->phrases = phrases;
  data->idf = (double *)&data[1];
  data->frequency = &data->idf[phrases];
  data->averageLength = (double)tokens / (double)rows;
  const char *at = counts;
  for (int i = 0; i < phrases; i++) {
    char *end = 0;
    sqlite3_int64 hits = at ? strtoll(at, &end, 10) : 0;
    if (!at || end == at || hits < 0) {
      sqlite3_free(data);
      return SQLITE_MISMATCH;
    }
    at = *end == ',' ? end + 1 : end;
    /* FTS5's idf, floored as it floors it (a phrase in over half the rows would weigh below zero). */
    double idf = log((rows - hits + 0.5) / (hits + 0.5));
    data->idf[i] = idf <= 0.0 ? 1e-6 : idf;
  }
  if (at && *at) {
    sqlite3_free(data);
    return SQLITE_MISMATCH;
  }
  rc = api->xSetAuxdata(fts, data, freeBm25Data);
  if (rc != SQLITE_OK) return rc;
  *out = data;
  return SQLITE_OK;
}

/* BM25 of the phrase frequencies at a document length (rounding is monotone: a longer one scores no more). */
static double relevance(const Bm25Data *data, double length) {
  const double k1 = 1.2, b = 0.75;
  double score = 0.0;
  for (int i = 0; i < data->phrases; i++) {
    double f = data->frequency[i];
    score += data->idf[i] * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * length / data->averageLength)));
  }
  return score;
}

static void agentosBm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context, int argc,
                        sqlite3_value **argv) {
  if (argc < 1 || argc > 3) {
    sqlite3_result_error(
        context, "agentos_bm25 takes the phrases' document counts, then optionally how many phrases weigh and a floor", -1);
    return;
  }
  Bm25Data *data = 0;
  int scored = argc >= 2 ? sqlite3_value_int(argv[1]) : -1;
  double floor = argc == 3 ? sqlite3_value_double(argv[2]) : 0.0;
  int rc = bm25Data(api, fts, (const char *)sqlite3_value_text(argv[0]), scored, &data);
  if (rc == SQLITE_MISMATCH) {
    sqlite3_result_error(context,
                         "agentos_bm25: give one document count per phrase, comma-separated (per weighing "
                         "phrase when their number is given: from 1 to the query's phrase count)",
                         -1);
    return;
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(context, rc);
    return;
  }
  memset(data->frequency, 0, sizeof(double) * data->phrases);
  int instances = 0;
  rc = api->xInstCount(fts, &instances);
  for (int i = 0; rc == SQLITE_OK && i < instances; i++) {
    int phrase, column, offset;
    rc = api->xInst(fts, i, &phrase, &column, &offset);
    if (rc == SQLITE_OK && phrase < data->phrases) data->frequency[phrase] += 1.0;
  }
  /* A matching row holds at least one token. */
  if (rc == SQLITE_OK && floor > 0.0 && relevance(data, 1.0) < floor) {
    sqlite3_result_null(context);
    return;
  }
  int length = 0;
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &length);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(context, rc);
    return;
  }
  sqlite3_result_double(context, relevance(data, (double)length));
}

/* FTS5's API of this connection, as SQLite documents getting it (the fts5() SQL function). */
static fts5_api *fts5Api(sqlite3 *db) {
  fts5_api *api = 0;
  sqlite3_stmt *statement = 0;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", 0);
    sqlite3_step(statement);
  }
  sqlite3_finalize(statement);
  return api;
}

int sqlite3_agentosrank_init(sqlite3 *db, char **error, const sqlite3_api_routines *routines) {
  SQLITE_EXTENSION_INIT2(routines);
  fts5_api *api = fts5Api(db);
  if (!api || api->iVersion < 2) {
    *error = sqlite3_mprintf("agentos_bm25 needs SQLite with FTS5");
    return SQLITE_ERROR;
  }
  return api->xCreateFunction(api, "agentos_bm25", 0, agentosBm25, 0);
}
