/** Types for @phc/format 1.x, which ships none (its API: serialize and deserialize PHC strings). */
declare module '@phc/format' {
  export interface PhcObject {
    id: string;
    version?: number;
    params?: Record<string, string | number>;
    salt?: Buffer;
    hash?: Buffer;
  }
  export function serialize(options: PhcObject): string;
  export function deserialize(phcString: string): PhcObject;
  const phc: { serialize: typeof serialize; deserialize: typeof deserialize };
  export default phc;
}
