/**
 * What a refused user of an import is told, in the reference's codes (GET /api/v2/jobs/{id}/errors): each error
 * names the field (`path`, dotted from the user object) and says in words what is wrong with it.
 */
export type ImportErrorCode =
  | 'ANY_OF_MISSING'
  | 'ARRAY_LENGTH_LONG'
  | 'ARRAY_LENGTH_SHORT'
  | 'CONFLICT'
  | 'CONFLICT_EMAIL'
  | 'CONFLICT_USERNAME'
  | 'CONNECTION_NOT_FOUND'
  | 'DUPLICATED_USER'
  | 'ENUM_MISMATCH'
  | 'FORMAT'
  | 'INVALID_TYPE'
  | 'MAX_LENGTH'
  | 'MAXIMUM'
  | 'MFA_FACTORS_FAILED'
  | 'MIN_LENGTH'
  | 'MINIMUM'
  | 'NOT_PASSED'
  | 'OBJECT_ADDITIONAL_PROPERTIES'
  | 'OBJECT_REQUIRED'
  | 'PATTERN';

export interface ImportError {
  code: ImportErrorCode;
  message: string;
  path: string;
}

export function importError(code: ImportErrorCode, path: string, message: string): ImportError {
  return { code, path, message };
}
