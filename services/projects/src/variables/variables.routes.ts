import { Router } from 'express';
import { accountIdOf, validate } from '@platform/shared';
import { putVariableBody, toVariableResponse, variableParams } from './variables.schemas';
import type { VariablesService } from './variables.service';

const VARIABLES = '/api/projects/:projectId/services/:serviceId/variables';
const VARIABLE = `${VARIABLES}/:name`;

export function variablesRouter(variables: VariablesService): Router {
  const router = Router();

  router.get(VARIABLES, async (req, res) => {
    const { projectId, serviceId } = req.params;
    const list = await variables.listVariables(accountIdOf(req), projectId, serviceId);
    res.json({ variables: list.map(toVariableResponse) });
  });

  router.put(VARIABLE, async (req, res) => {
    const { name } = validate(variableParams, { name: req.params.name });
    const body = validate(putVariableBody, req.body ?? {});
    const { projectId, serviceId } = req.params;
    const { variable, created } = await variables.putVariable(
      accountIdOf(req),
      projectId,
      serviceId,
      name,
      body,
    );
    res.status(created ? 201 : 200).json(toVariableResponse(variable));
  });

  router.delete(VARIABLE, async (req, res) => {
    const { name } = validate(variableParams, { name: req.params.name });
    const { projectId, serviceId } = req.params;
    await variables.deleteVariable(accountIdOf(req), projectId, serviceId, name);
    res.status(204).end();
  });

  return router;
}
