/**
 * The JSON body of an API answer as the type the server declares for it (`SessionsAnswer`,
 * `SearchAnswer`… from `@hermes/web`): the tests read the same shapes the pages read.
 */
export function readAnswer<T>(res: Response): Promise<T> {
  return res.json() as Promise<T>;
}
